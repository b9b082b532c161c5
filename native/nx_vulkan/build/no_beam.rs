//! Integration tests link the engine into an executable. The Erlang NIF API (`enif_*`)
//! exists only inside the BEAM, which resolves it when it loads the cdylib; in a test
//! executable rustler's registered NIF functions would leave those symbols undefined and
//! the link (or, with undefined symbols allowed, the dynamic loader) fails. Test and example targets
//! therefore get a linker script that defines each of them as address 0 when, and only
//! when, something references it (`PROVIDE`). Tests never call a NIF, and the cdylib the
//! BEAM loads is linked without this script.
use std::fmt::Write as _;

/// Every `enif_` function of rustler 0.39's NIF API headers (versions 2.14 to 2.18), with
/// the variadic printing ones its `Debug` for terms calls.
const ENIF: &str = "
    alloc alloc_binary alloc_env alloc_resource binary_to_term clear_env compare
    compare_monitors consume_timeslice convert_time_unit cpu_time demonitor_process
    dlopen dlsym dynamic_resource_call free free_env free_iovec get_atom
    get_atom_cache_index get_atom_length get_double get_int get_int64 get_list_cell
    get_list_length get_local_pid get_local_port get_long get_map_size get_map_value
    get_resource get_string get_string_length get_tuple get_uint get_uint64 get_ulong
    getenv has_pending_exception hash init_resource_type inspect_binary
    inspect_iolist_as_binary inspect_iovec ioq_create ioq_deq ioq_destroy
    ioq_enq_binary ioq_enqv ioq_peek ioq_peek_head ioq_size is_atom is_binary
    is_current_process_alive is_empty_list is_exception is_fun is_identical is_list
    is_map is_number is_pid is_pid_undefined is_port is_port_alive is_process_alive
    is_ref is_tuple keep_resource make_atom make_atom_len make_badarg make_binary
    make_copy make_double make_existing_atom make_existing_atom_len make_int make_int64
    make_list_cell make_list_from_array make_long make_map_from_arrays make_map_put
    make_map_remove make_map_update make_monitor_term make_new_atom make_new_atom_len
    make_new_binary make_new_map make_ref make_resource make_resource_binary
    make_reverse_list make_string make_string_len make_sub_binary make_tuple_from_array
    make_uint make_uint64 make_ulong make_unique_integer map_iterator_create
    map_iterator_destroy map_iterator_get_pair map_iterator_is_head
    map_iterator_is_tail map_iterator_next map_iterator_prev max_atom_cache_index
    monitor_process monotonic_time now_time open_resource_type open_resource_type_x
    port_command priv_data raise_exception realloc realloc_binary release_binary
    release_resource schedule_nif select select_x self send set_pid_undefined
    sizeof_resource system_info term_size term_to_binary term_type thread_type
    time_offset whereis_pid whereis_port compare_pids make_pid
    snprintf fprintf vsnprintf vfprintf
";

/// Writes `no_beam.ld` into `out` and passes it to the linker of tests and examples (of
/// those that exist: the Hex package ships neither, and Cargo refuses a link argument for
/// a kind of target the package does not have).
pub fn write_linker_script(out: &std::path::Path, manifest: &std::path::Path) {
    let mut script = String::new();
    for name in ENIF.split_whitespace() {
        writeln!(script, "PROVIDE(enif_{name} = 0);").unwrap();
    }
    let out = out.join("no_beam.ld");
    std::fs::write(&out, script).unwrap();
    if manifest.join("tests").is_dir() {
        println!("cargo::rustc-link-arg-tests={}", out.display());
    }
    if manifest.join("../../bench/engine_bench.rs").is_file() {
        println!("cargo::rustc-link-arg-examples={}", out.display());
    }
}
