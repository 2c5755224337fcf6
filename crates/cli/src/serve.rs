//! `swapsight serve` (being built; see the open issue).

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    Err(crate::exit::fail(crate::exit::ERROR, "`swapsight serve` is not built yet"))
}
