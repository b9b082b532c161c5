//! The function library of generated kernels: `shaders/codegen/lib.comp`, one unoptimised
//! module per compute class (build/variants.rs `CODEGEN_LIB`), whose functions are those
//! of the static kernels (typed loads and stores, each element-wise family's `apply`).
//!
//! A generated kernel starts as a copy of its class's module with the placeholder `main`
//! taken out ([`Library::kernel_module`]); the emitter adds its own `main`, which calls
//! the library's functions, and [`finish`] drops what that `main` does not reach. No ids
//! are renumbered and no instruction is copied between modules: the kernel is the library
//! plus one function.

use crate::dtype::Compute;
use crate::error::{Error, Result};
use rspirv::dr::{self, Operand};
use rspirv::spirv::{BuiltIn, Decoration, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

/// A library function: its id, return type and parameter (pointer) types.
#[derive(Clone, Debug)]
pub struct Function {
    pub id: Word,
    pub returns: Word,
    pub params: Vec<Word>,
}

/// One class's library, parsed, without its `main`.
pub struct Library {
    module: dr::Module,
    /// Functions by name (the GLSL name, before glslang's `(` and argument mangling).
    functions: HashMap<String, Function>,
    /// The push-constant block variable (`pc`).
    pub push: Word,
    /// `gl_GlobalInvocationID` and `gl_NumWorkGroups`.
    pub global_id: Word,
    pub num_groups: Word,
}

/// The library module's name suffix for a class: f32 through f64 (`f32x`) on devices with
/// shaderFloat64, as the static kernels (`Kernels::get_key`).
pub fn suffix(class: Compute, device_f64: bool) -> Result<&'static str> {
    match class {
        Compute::F32 if device_f64 => Ok("f32x"),
        c => c
            .suffix()
            .ok_or_else(|| crate::unsupported!("no generated kernels compute in {c:?}")),
    }
}

/// The library of a module suffix (`suffix`), parsed once per process.
pub fn library(suffix: &str) -> Result<Arc<Library>> {
    static LIBRARIES: OnceLock<Mutex<HashMap<String, Arc<Library>>>> = OnceLock::new();
    let mut libraries = LIBRARIES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(l) = libraries.get(suffix) {
        return Ok(l.clone());
    }
    let bytes = crate::kernels::spirv::codegen_lib(suffix)
        .ok_or_else(|| crate::invalid!("no generated-kernel library {suffix:?}"))?;
    let library = Arc::new(Library::parse(bytes)?);
    libraries.insert(suffix.to_string(), library.clone());
    Ok(library)
}

fn broken(what: &str) -> Error {
    Error::Vulkan(format!("the generated-kernel library {what}"))
}

impl Library {
    fn parse(bytes: &[u8]) -> Result<Library> {
        let mut module =
            rspirv::dr::load_bytes(bytes).map_err(|e| broken(&format!("does not parse: {e}")))?;
        let main = match module.entry_points.as_slice() {
            [entry] => id_operand(entry, 1).ok_or_else(|| broken("has a malformed entry point"))?,
            _ => return Err(broken("has no single entry point")),
        };
        module.entry_points.clear();
        module
            .execution_modes
            .retain(|m| id_operand(m, 0) != Some(main));
        module
            .functions
            .retain(|f| f.def.as_ref().and_then(|d| d.result_id) != Some(main));
        let names: HashMap<Word, String> = module
            .debug_names
            .iter()
            .filter(|n| n.class.opcode == Op::Name)
            .filter_map(|n| match n.operands.as_slice() {
                [Operand::IdRef(id), Operand::LiteralString(s)] => Some((*id, s.clone())),
                _ => None,
            })
            .collect();
        let mut functions = HashMap::new();
        for f in &module.functions {
            let def = f
                .def
                .as_ref()
                .ok_or_else(|| broken("has a function without OpFunction"))?;
            let (Some(id), Some(returns)) = (def.result_id, def.result_type) else {
                return Err(broken("has a malformed OpFunction"));
            };
            let Some(name) = names.get(&id) else { continue };
            let name = name.split('(').next().unwrap_or(name).to_string();
            let params = f.parameters.iter().filter_map(|p| p.result_type).collect();
            functions.insert(
                name,
                Function {
                    id,
                    returns,
                    params,
                },
            );
        }
        let variable = |class: StorageClass| {
            module.types_global_values.iter().find_map(|i| {
                (i.class.opcode == Op::Variable
                    && matches!(i.operands.first(), Some(Operand::StorageClass(c)) if *c == class))
                .then_some(i.result_id)
                .flatten()
            })
        };
        let push =
            variable(StorageClass::PushConstant).ok_or_else(|| broken("has no push constants"))?;
        let builtin = |which: BuiltIn| {
            module.annotations.iter().find_map(|a| match a.operands.as_slice() {
                [Operand::IdRef(id), Operand::Decoration(Decoration::BuiltIn), Operand::BuiltIn(b)]
                    if *b == which =>
                {
                    Some(*id)
                }
                _ => None,
            })
        };
        let global_id = builtin(BuiltIn::GlobalInvocationId)
            .ok_or_else(|| broken("has no GlobalInvocationId"))?;
        let num_groups =
            builtin(BuiltIn::NumWorkgroups).ok_or_else(|| broken("has no NumWorkgroups"))?;
        Ok(Library {
            module,
            functions,
            push,
            global_id,
            num_groups,
        })
    }

    /// A library function by its GLSL name.
    pub fn function(&self, name: &str) -> Result<&Function> {
        self.functions
            .get(name)
            .ok_or_else(|| broken(&format!("lacks {name}")))
    }

    /// A copy of the library to add a kernel's `main` to.
    pub fn kernel_module(&self) -> dr::Module {
        self.module.clone()
    }
}

/// The id operand at `at` of an instruction, if it is one.
pub(super) fn id_operand(inst: &dr::Instruction, at: usize) -> Option<Word> {
    match inst.operands.get(at) {
        Some(Operand::IdRef(id)) => Some(*id),
        _ => None,
    }
}

/// Drops the functions that `main` does not reach, and the names and decorations of ids
/// that no longer exist: the driver then compiles the kernel's own code only.
pub fn finish(module: &mut dr::Module, main: Word) {
    let reached = reachable(module, [main]);
    module.functions.retain(|f| {
        f.def
            .as_ref()
            .and_then(|d| d.result_id)
            .is_some_and(|id| reached.contains(&id))
    });
    let mut defined: HashSet<Word> = module
        .types_global_values
        .iter()
        .filter_map(|i| i.result_id)
        .collect();
    for f in &module.functions {
        let insts = f.def.iter().chain(&f.parameters).chain(
            f.blocks
                .iter()
                .flat_map(|b| b.label.iter().chain(&b.instructions)),
        );
        defined.extend(insts.filter_map(|i| i.result_id));
    }
    module
        .debug_names
        .retain(|n| id_operand(n, 0).is_some_and(|id| defined.contains(&id)));
    module
        .annotations
        .retain(|a| id_operand(a, 0).is_none_or(|id| defined.contains(&id)));
    forbid_contraction(module);
}

/// Decorates every float add, subtract, multiply, divide, remainder and negation with
/// NoContraction. Each op runs alone in its static kernel, so no driver fuses one op's
/// multiply with the next op's add there; inlined into one `main`, a driver could (one
/// rounding where the ops round twice). Within an op the static kernels mark what must
/// not be fused themselves (`precise`), and exact steps round the same fused or not.
/// The math library's functions (`math_*` and what they call) are left as their static
/// kernels compile them, where a driver may fuse a series' steps: marked here, they
/// could round differently; their operands and results meet other ops only through
/// marked instructions (or, in f32, through the bits).
fn forbid_contraction(module: &mut dr::Module) {
    let math = math_functions(module);
    const FLOAT_ARITHMETIC: [Op; 7] = [
        Op::FAdd,
        Op::FSub,
        Op::FMul,
        Op::FDiv,
        Op::FRem,
        Op::FMod,
        Op::FNegate,
    ];
    let marked: HashSet<Word> = module
        .annotations
        .iter()
        .filter(|a| {
            matches!(
                a.operands.get(1),
                Some(Operand::Decoration(Decoration::NoContraction))
            )
        })
        .filter_map(|a| id_operand(a, 0))
        .collect();
    let ids: Vec<Word> = module
        .functions
        .iter()
        .filter(|f| {
            f.def
                .as_ref()
                .and_then(|d| d.result_id)
                .is_none_or(|id| !math.contains(&id))
        })
        .flat_map(|f| f.blocks.iter().flat_map(|b| &b.instructions))
        .filter(|i| FLOAT_ARITHMETIC.contains(&i.class.opcode))
        .filter_map(|i| i.result_id)
        .filter(|id| !marked.contains(id))
        .collect();
    for id in ids {
        module.annotations.push(dr::Instruction::new(
            Op::Decorate,
            None,
            None,
            vec![
                Operand::IdRef(id),
                Operand::Decoration(Decoration::NoContraction),
            ],
        ));
    }
}

/// The math library's functions in `module`: those named `math_*` but main's
/// initialisers (`math_init*`, which compute nothing), and every function they call.
fn math_functions(module: &dr::Module) -> HashSet<Word> {
    let roots = module
        .debug_names
        .iter()
        .filter_map(|n| match n.operands.as_slice() {
            [Operand::IdRef(id), Operand::LiteralString(s)]
                if s.starts_with("math_") && !s.starts_with("math_init") =>
            {
                Some(*id)
            }
            _ => None,
        });
    reachable(module, roots)
}

/// The functions `roots` name (of those the module defines) and every function they
/// call, directly or not.
fn reachable(module: &dr::Module, roots: impl IntoIterator<Item = Word>) -> HashSet<Word> {
    let by_id: HashMap<Word, usize> = module
        .functions
        .iter()
        .enumerate()
        .filter_map(|(i, f)| Some((f.def.as_ref()?.result_id?, i)))
        .collect();
    let mut todo: Vec<Word> = roots
        .into_iter()
        .filter(|id| by_id.contains_key(id))
        .collect();
    let mut reached: HashSet<Word> = todo.iter().copied().collect();
    while let Some(f) = todo.pop() {
        for inst in module.functions[by_id[&f]]
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
        {
            if inst.class.opcode == Op::FunctionCall {
                if let Some(callee) = id_operand(inst, 0) {
                    if by_id.contains_key(&callee) && reached.insert(callee) {
                        todo.push(callee);
                    }
                }
            }
        }
    }
    reached
}
