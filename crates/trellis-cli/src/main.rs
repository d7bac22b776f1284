//! The `trellis` binary (see the `trellis_cli` crate's docs).

fn main() -> std::process::ExitCode {
    trellis_cli::main()
}
