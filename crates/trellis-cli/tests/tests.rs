//! Integration tests of the `trellis` command: one binary, topic modules.

mod util;

mod astar;
mod contract;
mod errors;
mod flat;
mod hostile;
mod interactive;
mod issue11_limits;
mod issue11_numerics;
mod issue11_readers;
mod issue11_trees;
mod issue12_beamjets;
mod issue12_kernel;
mod issue13_trees;
mod issue21_linkage;
mod issue21_reader;
mod issue22_names;
mod issue22_output;
mod issue22_range;
mod issue22_store;
mod issue24_triplets;
mod issue25_checkpoint;
mod issue26_summary;
mod jets;
mod serve;
mod sparse;
