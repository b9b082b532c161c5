//! Emits a generated kernel: its class's library plus a `main` that walks the domain
//! (grid-stride, as the static kernels) and, at each point, loads the inputs, computes
//! each node and stores the outputs, calling the library's `load_elem`, `unary_apply`,
//! `binary_apply` and `store_elem`, each through a copy specialised for the type or op
//! of the call (`specialize.rs`). Sizes, strides, types and op codes are constants of the
//! module; tensor addresses and the group's constants are push constants.

use super::ir::{constant_bits, Group, Node};
use super::library::{finish, Function, Library};
use super::math::{is_math, math_names, MATH};
use super::specialize::specialize;
use crate::dtype::{Compute, DType};
use crate::error::{Error, Result};
use crate::ops::elementwise::UnaryOp;
use crate::ops::layout::contiguous_strides;
use rspirv::binary::Assemble;
use rspirv::dr::{self, Builder, Operand};
use rspirv::spirv::{
    ExecutionMode, ExecutionModel, FunctionControl, LoopControl, Op, StorageClass, Word,
};
use std::collections::HashMap;

/// Workgroup width (LocalSize), as the static element-wise kernels.
pub const GROUP_WIDTH: u32 = 256;

impl From<rspirv::dr::Error> for Error {
    fn from(e: rspirv::dr::Error) -> Error {
        Error::Vulkan(format!("emitting a generated kernel: {e:?}"))
    }
}

/// The SPIR-V words of `group`'s kernel, computing in `class` with `library`.
pub fn emit(group: &Group, class: Compute, library: &Library) -> Result<Vec<u32>> {
    let mut e = Emitter::new(library, class, group)?;
    e.main(group)?;
    let main = e.main_id;
    let mut module = e.b.module();
    finish(&mut module, main);
    Ok(module.assemble())
}

/// The functions a kernel calls, with one Function-storage variable per parameter: glslang
/// passes arguments by pointer, and calls never overlap, so one set per function serves.
struct Callee {
    f: Function,
    args: Vec<Word>,
}

pub(super) struct Emitter<'l> {
    pub(super) b: Builder,
    library: &'l Library,
    pub(super) uint: Word,
    int: Word,
    /// The class and its type.
    class: Compute,
    pub(super) t: Word,
    main_id: Word,
    /// The library functions the kernel calls, specialised (`specialized`), by name.
    pub(super) specialized: HashMap<String, Function>,
    /// Their parameter variables, by the same names.
    callees: HashMap<String, Callee>,
    /// A zero that the driver cannot know ahead of the launch (`opaque`).
    opaque_zero: Option<Word>,
}

impl<'l> Emitter<'l> {
    fn new(library: &'l Library, class: Compute, group: &Group) -> Result<Self> {
        let (module, specialized) = specialized(library, group, class)?;
        let mut b = Builder::new_from_module(module);
        let uint = b.type_int(32, 0);
        let int = b.type_int(32, 1);
        let t = match class {
            Compute::F32 => b.type_float(32, None),
            Compute::F64 => b.type_float(64, None),
            Compute::I32 => int,
            Compute::U32 => uint,
            Compute::I64 => b.type_int(64, 1),
            Compute::U64 => b.type_int(64, 0),
            c => return Err(crate::unsupported!("no generated kernels compute in {c:?}")),
        };
        let main_id = b.id();
        Ok(Emitter {
            b,
            library,
            uint,
            int,
            class,
            t,
            main_id,
            specialized,
            callees: HashMap::new(),
            opaque_zero: None,
        })
    }

    pub(super) fn u32(&mut self, v: u32) -> Word {
        let uint = self.uint;
        self.b.constant_bit32(uint, v)
    }

    /// The variables of a library function's parameters, declared where `main`'s
    /// variables must be: at the start of its first block.
    fn callee(&mut self, name: &str) -> Result<Callee> {
        let f = self.specialized[name].clone();
        let args = f
            .params
            .iter()
            .map(|&ptr| self.b.variable(ptr, None, StorageClass::Function, None))
            .collect();
        Ok(Callee { f, args })
    }

    /// Calls the library function `name` (declared by `main`) with `values`, each stored
    /// to its parameter's variable first.
    pub(super) fn call(&mut self, name: &str, values: &[Word]) -> Result<Word> {
        let callee = &self.callees[name];
        for (&var, &v) in callee.args.iter().zip(values) {
            self.b.store(var, v, None, [])?;
        }
        let (returns, id, args) = (callee.f.returns, callee.f.id, callee.args.clone());
        Ok(self.b.function_call(returns, None, id, args)?)
    }

    fn main(&mut self, group: &Group) -> Result<()> {
        let void = self.b.type_void();
        let fn_void = self.b.type_function(void, []);
        let uvec2 = self.b.type_vector(self.uint, 2);
        let uvec3 = self.b.type_vector(self.uint, 3);
        let bool_t = self.b.type_bool();
        let push_uvec2 = self.b.type_pointer(None, StorageClass::PushConstant, uvec2);

        self.b
            .begin_function(void, Some(self.main_id), FunctionControl::NONE, fn_void)?;
        self.b.begin_block(None)?;
        for name in callees(group, self.class) {
            if !self.callees.contains_key(&name) {
                let callee = self.callee(&name)?;
                self.callees.insert(name, callee);
            }
        }
        // (Function variables belong at the start of the first block.)
        let accumulators = self.accumulators(group)?;
        // The math library's state (dd_one, the workgroup's tables), set by every
        // invocation before any diverges.
        let (_, init) = math_names();
        if self.callees.contains_key(init) {
            self.call(init, &[])?;
        }

        // The first element and the grid's stride: global_index() and global_threads().
        let (global_id, num_groups) = (self.library.global_id, self.library.num_groups);
        let gid = self.b.load(uvec3, None, global_id, None, [])?;
        let groups = self.b.load(uvec3, None, num_groups, None, [])?;
        let (uint, width) = (self.uint, self.u32(GROUP_WIDTH));
        let gx = self.b.composite_extract(uint, None, gid, [0])?;
        let gy = self.b.composite_extract(uint, None, gid, [1])?;
        let nx = self.b.composite_extract(uint, None, groups, [0])?;
        let ny = self.b.composite_extract(uint, None, groups, [1])?;
        let row = self.b.i_mul(uint, None, nx, width)?;
        let y_part = self.b.i_mul(uint, None, gy, row)?;
        let start = self.b.i_add(uint, None, gx, y_part)?;
        let stride = self.b.i_mul(uint, None, row, ny)?;
        // One point per element, or per output point of a reduction.
        let n = crate::tensor::numel(&group.kept_shape()).unwrap_or(0) as u32;
        let n = self.u32(n);

        // The push block's count (`n`, below 2^31) shifted right by 31: zero, but not to a
        // driver compiling the kernel (see `opaque`).
        let push_uint = self.b.type_pointer(None, StorageClass::PushConstant, uint);
        let member = self.b.constant_bit32(self.int, 1);
        let count_ptr = self
            .b
            .access_chain(push_uint, None, self.library.push, [member])?;
        let count = self.b.load(uint, None, count_ptr, None, [])?;
        let shift = self.u32(31);
        self.opaque_zero = Some(self.b.shift_right_logical(uint, None, count, shift)?);

        // The constants, from their push words (`Group::constant_words`), read once.
        let push_uint = self.b.type_pointer(None, StorageClass::PushConstant, uint);
        let mut constants = HashMap::new();
        let mut word = 0u32;
        for (j, node) in group.nodes.iter().enumerate() {
            if let Node::Constant(..) = node {
                let mut read = |e: &mut Self| -> Result<Word> {
                    let member = e.b.constant_bit32(e.int, 2);
                    let index = e.b.constant_bit32(e.int, word);
                    word += 1;
                    let ptr =
                        e.b.access_chain(push_uint, None, e.library.push, [member, index])?;
                    Ok(e.b.load(uint, None, ptr, None, [])?)
                };
                let low = read(self)?;
                let t = self.t;
                let value = if self.class.is_64() {
                    let high = read(self)?;
                    let pair = self.b.composite_construct(uvec2, None, [low, high])?;
                    self.b.bitcast(t, None, pair)?
                } else if t == uint {
                    low
                } else {
                    self.b.bitcast(t, None, low)?
                };
                constants.insert(j, value);
            }
        }

        // Tensor addresses, read once.
        let mut addrs = Vec::new();
        for k in 0..group.inputs.len() + group.outputs.len() {
            let zero = self.b.constant_bit32(self.int, 0);
            let index = self.b.constant_bit32(self.int, k as u32);
            let ptr = self
                .b
                .access_chain(push_uvec2, None, self.library.push, [zero, index])?;
            addrs.push(self.b.load(uvec2, None, ptr, None, [])?);
        }

        let (header, body, cont, merge) = (self.b.id(), self.b.id(), self.b.id(), self.b.id());
        let entry_label = self.current_label();
        let (i, next) = (self.b.id(), self.b.id());
        self.b.branch(header)?;

        self.b.begin_block(Some(header))?;
        self.b
            .phi(uint, Some(i), [(start, entry_label), (next, cont)])?;
        let more = self.b.u_less_than(bool_t, None, i, n)?;
        self.b.loop_merge(merge, cont, LoopControl::NONE, [])?;
        self.b.branch_conditional(more, body, merge, [])?;

        self.b.begin_block(Some(body))?;
        if group.reduce_axes.is_empty() {
            self.element_point(group, i, &addrs, &constants)?;
        } else {
            self.output_point(group, i, &addrs, &constants, &accumulators)?;
        }
        self.b.branch(cont)?;

        self.b.begin_block(Some(cont))?;
        self.b.i_add(uint, Some(next), i, stride)?;
        self.b.branch(header)?;

        self.b.begin_block(Some(merge))?;
        self.b.ret()?;
        self.b.end_function()?;

        // Every global variable the module declares is in the interface (SPIR-V 1.4+
        // lists all that the entry point's call tree uses).
        let interface: Vec<Word> = self
            .b
            .module_ref()
            .types_global_values
            .iter()
            .filter(|inst| inst.class.opcode == rspirv::spirv::Op::Variable)
            .filter_map(|inst| inst.result_id)
            .collect();
        self.b
            .entry_point(ExecutionModel::GLCompute, self.main_id, "main", interface);
        self.b
            .execution_mode(self.main_id, ExecutionMode::LocalSize, [GROUP_WIDTH, 1, 1]);
        Ok(())
    }

    /// The body of an element-wise group at domain index `i`: every node, then the
    /// stores.
    fn element_point(
        &mut self,
        group: &Group,
        i: Word,
        addrs: &[Word],
        constants: &HashMap<usize, Word>,
    ) -> Result<()> {
        let mut values = constants.clone();
        for j in 0..group.nodes.len() {
            let index = match group.nodes[j] {
                Node::Input(k) => {
                    let view = &group.inputs[k];
                    Some(self.index(i, &group.shape, &view.strides, view.offset)?)
                }
                _ => None,
            };
            if !values.contains_key(&j) {
                let v = self.node_value(group, j, &values, addrs, index)?;
                values.insert(j, v);
            }
        }
        for (j, &o) in group.outputs.iter().enumerate() {
            self.store(group, o, addrs[group.inputs.len() + j], i, values[&o])?;
        }
        Ok(())
    }

    /// Stores `value`, node `o`'s, as its type at element `index` of the tensor at `addr`.
    pub(super) fn store(
        &mut self,
        group: &Group,
        o: usize,
        addr: Word,
        index: Word,
        value: Word,
    ) -> Result<()> {
        let ty = group.dtype(o).code();
        let code = self.u32(ty);
        self.call(&format!("store_{ty}"), &[addr, code, index, value])?;
        Ok(())
    }

    /// The value of node `j` (not a constant or a reduction), whose operands are in
    /// `values`; an input's from element `index` of its tensor.
    pub(super) fn node_value(
        &mut self,
        group: &Group,
        j: usize,
        values: &HashMap<usize, Word>,
        addrs: &[Word],
        index: Option<Word>,
    ) -> Result<Word> {
        let bool_t = self.b.type_bool();
        Ok(match group.nodes[j] {
            Node::Input(k) => {
                let view = &group.inputs[k];
                let ty = self.u32(view.dtype.code());
                let index = index.expect("an input's index");
                self.call(
                    &format!("load_{}", view.dtype.code()),
                    &[addrs[k], ty, index],
                )?
            }
            Node::Unary(op, a, out) if is_math(op, self.class) => {
                let ty = self.u32(out.code());
                self.call(math_names().0, &[values[&a], ty])?
            }
            Node::Unary(op, a, _) => {
                let name = unary_function(op);
                let code = self.u32(code_of(&name));
                let bits = self.u32(type_bits(group.dtype(a)));
                self.call(&name, &[code, values[&a], bits])?
            }
            Node::Binary(op, a, b, _) => {
                let code = self.u32(op as u32);
                let v = self.call(
                    &format!("binary_{}", op as u32),
                    &[code, values[&a], values[&b]],
                )?;
                if op.is_predicate() {
                    self.opaque(v)?
                } else {
                    v
                }
            }
            Node::Select(p, a, b, _) => {
                // The predicate holds 0 to 255 (a u8 loaded into the class): compared
                // with zero, it picks one value, moved as it is.
                let zero = self.constant(0, DType::U8);
                let picks_true = if matches!(self.class, Compute::F32 | Compute::F64) {
                    self.b.f_ord_not_equal(bool_t, None, values[&p], zero)?
                } else {
                    self.b.i_not_equal(bool_t, None, values[&p], zero)?
                };
                let t = self.t;
                self.b.select(t, None, picks_true, values[&a], values[&b])?
            }
            Node::Constant(..) | Node::Reduce(..) => {
                return Err(Error::Vulkan(format!(
                    "node {j} is not computed at a point"
                )))
            }
        })
    }

    /// `v`, a comparison's 0 or 1 in a float class, hidden from the driver's constant
    /// folding. A compare of a value with itself (`x > x`) is known at compile time, and
    /// lavapipe then folded `x * 0.0` to 0.0 for negative x (the fused ops' result feeds
    /// the multiply in registers; one op's kernel multiplies a loaded value, -0.0). OR-ing
    /// a zero the driver cannot know keeps the value and the IEEE product.
    fn opaque(&mut self, v: Word) -> Result<Word> {
        if !matches!(self.class, Compute::F32 | Compute::F64) {
            return Ok(v);
        }
        let zero = self.opaque_zero.expect("main reads the opaque zero first");
        let (uint, t) = (self.uint, self.t);
        if self.class == Compute::F64 {
            let u64_t = self.b.type_int(64, 0);
            let wide = self.b.u_convert(u64_t, None, zero)?;
            let bits = self.b.bitcast(u64_t, None, v)?;
            let kept = self.b.bitwise_or(u64_t, None, bits, wide)?;
            Ok(self.b.bitcast(t, None, kept)?)
        } else {
            let bits = self.b.bitcast(uint, None, v)?;
            let kept = self.b.bitwise_or(uint, None, bits, zero)?;
            Ok(self.b.bitcast(t, None, kept)?)
        }
    }

    /// A number stored as `dtype` (its little-endian `bits`), as a literal of the class
    /// (`constant_bits`).
    fn constant(&mut self, bits: u64, dtype: DType) -> Word {
        let t = self.t;
        let value = constant_bits(self.class, bits, dtype);
        if self.class.is_64() {
            self.b.constant_bit64(t, value)
        } else {
            self.b.constant_bit32(t, value as u32)
        }
    }

    /// The label of the block being built.
    pub(super) fn current_label(&self) -> Word {
        let m = self.b.module_ref();
        let f = self.b.selected_function().expect("in main");
        let blk = self.b.selected_block().expect("in a block");
        m.functions[f].blocks[blk]
            .label
            .as_ref()
            .and_then(|l| l.result_id)
            .expect("blocks have labels")
    }

    /// The element of a view for domain index `i`: `offset + i` where the view walks the
    /// domain contiguously, `offset` where it broadcasts one element, otherwise the sum
    /// of each coordinate times its stride (32-bit wrapping, as the static kernels).
    fn index(
        &mut self,
        i: Word,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Word> {
        let uint = self.uint;
        let used: Vec<(usize, isize)> = shape
            .iter()
            .zip(strides)
            .filter(|(&d, _)| d != 1)
            .map(|(&d, &s)| (d, s))
            .collect();
        let offset_c = self.u32(offset as u32);
        if used.iter().all(|&(_, s)| s == 0) {
            return Ok(offset_c);
        }
        let dims: Vec<usize> = used.iter().map(|&(d, _)| d).collect();
        let contiguous = contiguous_strides(&dims);
        if used.iter().map(|&(_, s)| s).eq(contiguous.iter().copied()) {
            return if offset == 0 {
                Ok(i)
            } else {
                Ok(self.b.i_add(uint, None, i, offset_c)?)
            };
        }
        let mut acc = offset_c;
        let mut rem = i;
        for (k, &(dim, stride)) in used.iter().enumerate().rev() {
            let dim_c = self.u32(dim as u32);
            let coord = if k == 0 {
                rem
            } else {
                self.b.u_mod(uint, None, rem, dim_c)?
            };
            if stride != 0 {
                let stride_c = self.u32(stride as i32 as u32);
                let term = self.b.i_mul(uint, None, coord, stride_c)?;
                acc = self.b.i_add(uint, None, acc, term)?;
            }
            if k > 0 {
                rem = self.b.u_div(uint, None, rem, dim_c)?;
            }
        }
        Ok(acc)
    }
}

/// The library's function for a unary op (`unary_<code>`; on real values the conjugate is
/// the value and the imaginary part zero, as `ops::elementwise::unary` runs them).
fn unary_function(op: UnaryOp) -> String {
    let op = match op {
        UnaryOp::Conjugate => UnaryOp::Identity,
        UnaryOp::Imag => UnaryOp::Zero,
        op => op,
    };
    format!("unary_{}", op as u32)
}

/// The number after a specialised function's name (`binary_3` -> 3).
fn code_of(name: &str) -> u32 {
    name.rsplit('_')
        .next()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// The library's generic function behind a specialised name, and the parameter it is
/// specialised on: `load_<type>` is `load_elem(addr, ty, i)` for that type, `store_<type>`
/// `store_elem(addr, ty, i, v)`, `unary_<op>` `unary_apply(op, x, bits)`, `binary_<op>`
/// `binary_apply(op, a, b)`.
fn generic(name: &str) -> (&'static str, usize) {
    match name.split('_').next() {
        Some("load") => ("load_elem", 1),
        Some("store") => ("store_elem", 1),
        Some("unary") => ("unary_apply", 0),
        _ => ("binary_apply", 0),
    }
}

/// The library with a copy of each generic function the kernel calls, specialised for
/// the op or type it calls it with (`specialize.rs`), and those copies by name.
fn specialized(
    library: &Library,
    group: &Group,
    class: Compute,
) -> Result<(dr::Module, HashMap<String, Function>)> {
    let mut module = library.kernel_module();
    let uint = module
        .types_global_values
        .iter()
        .find(|i| {
            i.class.opcode == Op::TypeInt
                && matches!(
                    i.operands.as_slice(),
                    [Operand::LiteralBit32(32), Operand::LiteralBit32(0)]
                )
        })
        .and_then(|i| i.result_id)
        .ok_or_else(|| Error::Vulkan("the generated-kernel library has no uint".into()))?;
    let mut next = module.header.as_ref().map_or(1, |h| h.bound);
    let mut functions = HashMap::new();
    for name in callees(group, class) {
        if functions.contains_key(&name) {
            continue;
        }
        if super::reduction::LIBRARY.contains(&name.as_str()) || MATH.contains(&name.as_str()) {
            functions.insert(name.clone(), library.function(&name)?.clone());
            continue;
        }
        let (generic_name, param) = generic(&name);
        let f = library.function(generic_name)?.clone();
        let value = code_of(&name);
        let constant = next;
        next += 1;
        module.types_global_values.push(dr::Instruction::new(
            Op::Constant,
            Some(uint),
            Some(constant),
            vec![Operand::LiteralBit32(value)],
        ));
        let mut fresh = || {
            next += 1;
            next - 1
        };
        let id = specialize(&mut module, &mut fresh, f.id, param, value, constant)
            .ok_or_else(|| Error::Vulkan(format!("specialising {generic_name}")))?;
        functions.insert(name, Function { id, ..f });
    }
    if let Some(h) = module.header.as_mut() {
        h.bound = next;
    }
    Ok((module, functions))
}

/// The library functions `group`'s kernel calls: a load per input type, each op's
/// function, a store per output type, by the names of their specialised copies.
fn callees(group: &Group, class: Compute) -> Vec<String> {
    let mut names: Vec<String> = group
        .nodes
        .iter()
        .filter_map(|n| match *n {
            Node::Input(k) => Some(format!("load_{}", group.inputs[k].dtype.code())),
            Node::Unary(op, _, _) if is_math(op, class) => None,
            Node::Unary(op, _, _) => Some(unary_function(op)),
            Node::Binary(op, _, _, _) => Some(format!("binary_{}", op as u32)),
            Node::Constant(..) | Node::Select(..) | Node::Reduce(..) => None,
        })
        .collect();
    if group.nodes.iter().any(|n| matches!(n, Node::Reduce(..))) {
        names.extend(super::reduction::LIBRARY.iter().map(|f| f.to_string()));
    }
    if group
        .nodes
        .iter()
        .any(|n| matches!(n, Node::Unary(op, ..) if is_math(*op, class)))
    {
        let (exp, init) = math_names();
        names.extend([exp.to_string(), init.to_string()]);
    }
    names.extend(
        group
            .outputs
            .iter()
            .map(|&o| format!("store_{}", group.dtype(o).code())),
    );
    names
}

/// The width unary.comp's `type_bits` gives a type (for count_leading_zeros and
/// population_count).
fn type_bits(t: DType) -> u32 {
    if t.is_int() {
        t.bits() as u32
    } else if matches!(t, DType::F16 | DType::BF16) {
        16
    } else if t == DType::F64 {
        64
    } else {
        32
    }
}
