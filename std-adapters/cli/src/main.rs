//! The `quiver` command; see the `quiver_cli` crate for what it does.

fn main() -> std::process::ExitCode {
    quiver_cli::main()
}
