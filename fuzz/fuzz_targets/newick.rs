//! Trees (Newick and nested JSON) and named Newick hierarchies: parsed or
//! refused, at any depth, never a stack overflow; a tree that parses prints
//! to text that parses to the same tree.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(t) = trellis::Tree::parse(text) {
            assert_eq!(trellis::Tree::parse(&t.to_newick()).expect("round trip"), t);
            let _ = t.validate(t.num_leaves(), true);
        }
        if let Ok(h) = trellis::ddt::Hierarchy::parse_newick(text) {
            let names: Vec<String> = h.leaf_names().into_iter().map(String::from).collect();
            let _ = h.lca_depths(&names);
        }
    }
});
