//! Copies of library functions for one value of a parameter: each `switch` on that
//! parameter jumps straight to its case, and the other cases go.
//!
//! The library's generic functions (`binary_apply(op, a, b)`, `load_elem(addr, ty, i)`,
//! ...) switch over every op or type. Drivers inline every call before they fold a
//! switch on a constant, so a kernel of a hundred ops made them compile the whole switch,
//! with every math function behind it, a hundred times (2.2 s on an H100). A copy for
//! `op = add` holds the add alone; [`super::library::finish`] then drops the functions
//! no copy calls.

use super::library::id_operand;
use rspirv::dr::{self, Operand};
use rspirv::spirv::{Op, Word};
use std::collections::{HashMap, HashSet};

/// Adds to `module` a copy of `function` in which every `switch` on parameter `param`
/// (a pointer parameter, read with OpLoad, as glslang passes arguments) takes the case of
/// `value`, `constant` being an OpConstant of the parameter's type holding it. Returns the
/// copy's id; `None` if `function` is not in the module. `fresh` gives unused ids.
pub fn specialize(
    module: &mut dr::Module,
    fresh: &mut impl FnMut() -> Word,
    function: Word,
    param: usize,
    value: u32,
    constant: Word,
) -> Option<Word> {
    let original = module
        .functions
        .iter()
        .find(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(function))?;
    let mut copy = original.clone();
    renumber(&mut copy, fresh);
    let pointer = copy.parameters.get(param)?.result_id?;
    let selectors: HashSet<Word> = instructions(&copy)
        .filter(|i| i.class.opcode == Op::Load && id_operand(i, 0) == Some(pointer))
        .filter_map(|i| i.result_id)
        .collect();
    for block in &mut copy.blocks {
        if let Some(last) = block.instructions.last_mut() {
            if last.class.opcode == Op::Switch
                && id_operand(last, 0).is_some_and(|s| selectors.contains(&s))
            {
                let target = case_of(last, value);
                last.operands = vec![Operand::IdRef(constant), Operand::IdRef(target)];
            }
        }
    }
    drop_unreachable(&mut copy);
    let id = copy.def.as_ref().and_then(|d| d.result_id)?;
    module.functions.push(copy);
    Some(id)
}

/// The label an `OpSwitch` jumps to for `value`: its case, else its default.
fn case_of(switch: &dr::Instruction, value: u32) -> Word {
    let default = id_operand(switch, 1).expect("OpSwitch has a default");
    switch.operands[2..]
        .chunks(2)
        .find_map(|pair| match pair {
            [Operand::LiteralBit32(v), Operand::IdRef(label)] if *v == value => Some(*label),
            _ => None,
        })
        .unwrap_or(default)
}

fn instructions(f: &dr::Function) -> impl Iterator<Item = &dr::Instruction> {
    f.blocks.iter().flat_map(|b| &b.instructions)
}

/// Gives every id the function defines (itself, its parameters, labels and results) a
/// fresh one, and rewrites its uses inside the function.
fn renumber(f: &mut dr::Function, fresh: &mut impl FnMut() -> Word) {
    let mut map = HashMap::new();
    let defined = f.def.iter().chain(&f.parameters).chain(
        f.blocks
            .iter()
            .flat_map(|b| b.label.iter().chain(&b.instructions)),
    );
    for inst in defined {
        if let Some(id) = inst.result_id {
            map.insert(id, fresh());
        }
    }
    let rewrite = |inst: &mut dr::Instruction| {
        if let Some(id) = inst.result_id.as_mut() {
            *id = map[id];
        }
        for operand in &mut inst.operands {
            if let Operand::IdRef(id) = operand {
                if let Some(&new) = map.get(id) {
                    *id = new;
                }
            }
        }
    };
    f.def.iter_mut().for_each(rewrite);
    f.parameters.iter_mut().for_each(rewrite);
    for block in &mut f.blocks {
        block.label.iter_mut().for_each(rewrite);
        block.instructions.iter_mut().for_each(rewrite);
    }
}

/// Drops the blocks that no branch from the entry reaches, keeping the merge and continue
/// blocks that reached structured headers name (the structure must stay whole), and the
/// OpPhi entries of dropped predecessors.
fn drop_unreachable(f: &mut dr::Function) {
    let index: HashMap<Word, usize> = f
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((b.label.as_ref()?.result_id?, i)))
        .collect();
    let mut kept = vec![false; f.blocks.len()];
    let mut todo = vec![0usize];
    while let Some(i) = todo.pop() {
        if i >= kept.len() || kept[i] {
            continue;
        }
        kept[i] = true;
        for inst in &f.blocks[i].instructions {
            let targets: Vec<Word> = match inst.class.opcode {
                Op::Branch
                | Op::BranchConditional
                | Op::Switch
                | Op::SelectionMerge
                | Op::LoopMerge => inst
                    .operands
                    .iter()
                    .filter_map(|o| match o {
                        Operand::IdRef(id) => Some(*id),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            todo.extend(targets.iter().filter_map(|t| index.get(t)));
        }
    }
    let labels: HashSet<Word> = f
        .blocks
        .iter()
        .zip(&kept)
        .filter(|(_, &k)| k)
        .filter_map(|(b, _)| b.label.as_ref()?.result_id)
        .collect();
    let mut i = 0;
    f.blocks.retain(|_| {
        i += 1;
        kept[i - 1]
    });
    for inst in f.blocks.iter_mut().flat_map(|b| &mut b.instructions) {
        if inst.class.opcode == Op::Phi {
            let pairs: Vec<Operand> = inst
                .operands
                .chunks(2)
                .filter(
                    |pair| matches!(pair, [_, Operand::IdRef(parent)] if labels.contains(parent)),
                )
                .flatten()
                .cloned()
                .collect();
            inst.operands = pairs;
        }
    }
}
