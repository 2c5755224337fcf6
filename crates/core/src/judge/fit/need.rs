//! The need's lines for a model as given: its weights, and (from its
//! description) what grows with the context.

use super::plan::{Input, NeedId, NeedLine};
use super::Model;

/// The weights' line: a size as given, or the files counted by their
/// length.
pub fn weights_line(model: &Model) -> NeedLine {
    match model {
        Model::Size { bytes, given } => NeedLine {
            id: NeedId::Weights,
            name: "weights",
            bytes: *bytes,
            formula: format!("{} as given", crate::util::text::clean(given)),
            inputs: vec![Input::num("bytes", *bytes, "the command line", "")],
        },
        Model::Files(w) => {
            let n = w.files.len();
            let s = if n == 1 { "" } else { "s" };
            NeedLine {
                id: NeedId::Weights,
                name: "weights",
                bytes: w.bytes,
                formula: format!("{n} file{s} by their length"),
                inputs: vec![Input::num("bytes", w.bytes, &files_source(w), "")],
            }
        }
    }
}

/// `model-00001-of-00004.safetensors …` (the first file, and how many more).
pub(crate) fn files_source(w: &super::Weights) -> String {
    match w.files.as_slice() {
        [] => "no file".into(),
        [one] => one.path.clone(),
        [first, rest @ ..] => format!("{} and {} more", first.path, rest.len()),
    }
}
