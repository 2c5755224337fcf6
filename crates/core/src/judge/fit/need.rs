//! The need's lines for a model as given: its weights, what grows with the
//! context (kv.rs), and the runtime's own buffers; and the largest context
//! that stays under each bound.

use super::kv::{kv_lines, thousands, KvAsk, KvDtype};
use super::model::safetensors::TensorSum;
use super::model::Description;
use super::plan::{Context, Input, Largest, LargestAt, NeedId, NeedLine, Runtime, SHORT_CONTEXT};
use super::{Bound, Model};

/// What `fit` was asked beyond the model: each `None` takes its default.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// `--context`: tokens per sequence.
    pub context: Option<u64>,
    /// `--parallel`: sequences held at once.
    pub parallel: Option<u64>,
    /// `--kv-dtype`.
    pub kv_dtype: Option<KvDtype>,
    /// `--runtime`.
    pub runtime: Option<Runtime>,
    /// Past runs' ratios, applied to the estimate (`None`: `--no-history`).
    pub history: Option<super::History>,
}

/// The search for the largest context stops here where the model does
/// not say its own maximum.
pub(crate) const SEARCH_CAP: u64 = 1 << 24;
/// llama.cpp's physical batch (`n_ubatch`), the rows its compute buffer
/// is sized for.
const LLAMA_UBATCH: u64 = 512;

/// The need of one model under one set of choices, at any context.
pub struct Sizer<'a> {
    d: Option<&'a Description>,
    weights: NeedLine,
    runtime: (Runtime, String),
    /// The KV dtype, the file or flag it came from, and the field.
    kv: (KvDtype, String, String),
    parallel: (u64, &'static str),
    /// The OS the need is for: MLX fuses attention on Metal only.
    os: String,
}

impl<'a> Sizer<'a> {
    /// The choices `ask` leaves open, taken by default: the runtime from
    /// the model's format and the OS, the KV dtype from the runtime and
    /// the model's dtype.
    pub fn new(
        model: &Model,
        d: Option<&'a Description>,
        tensors: Option<(TensorSum, usize)>,
        ask: &Ask,
        os: &str,
    ) -> Sizer<'a> {
        let runtime = match (ask.runtime, d) {
            (Some(r), _) => (r, "--runtime".to_string()),
            (None, Some(d)) if d.gguf => (
                Runtime::LlamaCpp,
                "default: a GGUF is llama.cpp's format; --runtime to change".into(),
            ),
            (None, _) if os == "macos" => (
                Runtime::Mlx,
                "default on macOS: mlx-lm; --runtime llama.cpp|torch to change".into(),
            ),
            (None, _) => (
                Runtime::Torch,
                "default off macOS: transformers on PyTorch; --runtime mlx|llama.cpp to change"
                    .into(),
            ),
        };
        let dtype = d.and_then(|d| d.dtype.as_ref());
        let kv = match (&ask.kv_dtype, runtime.0, dtype) {
            (Some(k), _, _) => (k.clone(), "--kv-dtype".to_string(), String::new()),
            (None, Runtime::LlamaCpp, _) => (
                KvDtype::parse("f16").expect("a known dtype"),
                "default: llama.cpp's --cache-type-k/v f16".into(),
                String::new(),
            ),
            (None, _, Some(t)) if KvDtype::parse(&t.value).is_ok() => (
                KvDtype::parse(&t.value).expect("checked"),
                t.source.clone(),
                t.key.clone(),
            ),
            (None, _, _) => (
                KvDtype::parse("f16").expect("a known dtype"),
                "default: f16, the model's dtype was not read".into(),
                String::new(),
            ),
        };
        let parallel = match ask.parallel {
            Some(p) => (p, "--parallel"),
            None => (1, "default"),
        };
        Sizer {
            d,
            weights: weights_line(model, tensors, d),
            runtime,
            kv,
            parallel,
            os: os.to_string(),
        }
    }

    /// The model's own maximum context, where its files say it.
    pub fn model_max(&self) -> Option<(u64, String)> {
        let m = self.d?.max_context.as_ref()?;
        Some((m.value, format!("{}: {}", m.source, m.key)))
    }

    /// The need's lines at `tokens` per sequence.
    pub fn lines(&self, tokens: u64, source: &str) -> Vec<NeedLine> {
        let mut out = vec![self.weights.clone()];
        let Some(d) = self.d else {
            return out;
        };
        out.extend(kv_lines(
            d,
            &KvAsk {
                tokens: (tokens, source),
                parallel: (self.parallel.0, self.parallel.1),
                dtype: (&self.kv.0, &self.kv.1, &self.kv.2),
                runtime: self.runtime.0,
            },
        ));
        out.extend(runtime_line(d, self.runtime.0, tokens, source));
        if self.runtime.0 == Runtime::Mlx {
            out.extend(super::mlx::scores_line(d, &self.os, tokens, source));
        }
        out
    }

    /// What llama.cpp holds past the estimate with flash attention off
    /// (llama_cpp.rs).
    pub fn llama_cpp_scores_note(&self, d: &Description, tokens: u64) -> Option<String> {
        super::llama_cpp::scores_note(d, tokens, LLAMA_UBATCH)
    }

    /// Σ of the lines at `tokens`.
    pub fn total(&self, tokens: u64) -> u64 {
        crate::util::units::saturating_sum(self.lines(tokens, "").iter().map(|l| l.bytes))
    }

    /// The context judged: `asked`, else the short one (the model's
    /// maximum where that is shorter).
    pub fn context(&self, asked: Option<u64>) -> Context {
        let tokens = asked.unwrap_or_else(|| {
            self.model_max()
                .map_or(SHORT_CONTEXT, |(m, _)| m.clamp(1, SHORT_CONTEXT))
        });
        Context {
            tokens,
            asked: asked.is_some(),
            parallel: self.parallel.0,
            kv_dtype: self.kv.0.name.clone(),
            kv_dtype_source: if self.kv.2.is_empty() {
                self.kv.1.clone()
            } else {
                format!("{}: {}", self.kv.1, self.kv.2)
            },
            runtime: self.runtime.0,
            runtime_source: self.runtime.1.clone(),
        }
    }

    /// The largest context under each bound: the need grows with the
    /// context (never shrinks), so a bisection finds it.
    pub fn largest(&self, bounds: &[Bound]) -> Largest {
        let max = self.model_max();
        let cap = max.as_ref().map_or(SEARCH_CAP, |m| m.0);
        let known = max.is_some();
        let at = |b: &Bound| {
            if self.total(0) > b.bytes {
                return LargestAt {
                    id: b.id,
                    tokens: None,
                    at_model_max: false,
                };
            }
            if self.total(cap) <= b.bytes {
                return LargestAt {
                    id: b.id,
                    tokens: Some(cap),
                    at_model_max: known,
                };
            }
            let (mut lo, mut hi) = (0, cap);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if self.total(mid) <= b.bytes {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            LargestAt {
                id: b.id,
                tokens: Some(lo),
                at_model_max: false,
            }
        };
        let bounds = bounds.iter().map(at).collect();
        Largest {
            model_max_tokens: max.as_ref().map(|m| m.0),
            model_max_source: max.map(|m| m.1),
            bounds,
        }
    }
}

/// The weights' line: a size as given; the safetensors headers' tensors
/// where every header read; else the files by their length. Experts are
/// all resident: said, never discounted.
fn weights_line(
    model: &Model,
    tensors: Option<(TensorSum, usize)>,
    d: Option<&Description>,
) -> NeedLine {
    let mut line = match model {
        Model::Size { bytes, given } => NeedLine {
            id: NeedId::Weights,
            name: "weights",
            bytes: *bytes,
            formula: format!("{} as given", crate::util::text::clean(given)),
            inputs: vec![Input::num("bytes", *bytes, "the command line", "")],
        },
        Model::Files(w) => {
            let source = files_source(w);
            let n = w.files.len();
            let others: u64 = crate::util::units::saturating_sum(
                w.files
                    .iter()
                    .filter(|f| !f.path.ends_with(".safetensors"))
                    .map(|f| f.bytes),
            );
            match tensors {
                Some((t, files)) => NeedLine {
                    id: NeedId::Weights,
                    name: "weights",
                    bytes: t.bytes.saturating_add(others),
                    formula: format!(
                        "{} tensors' dtype × shape in {files} safetensors header{} ({} elements)",
                        thousands(t.tensors),
                        if files == 1 { "" } else { "s" },
                        thousands(t.elements)
                    ),
                    inputs: vec![
                        Input::num("tensors", t.tensors, &source, "safetensors header"),
                        Input::num("elements", t.elements, &source, "safetensors header"),
                        Input::num("bytes", t.bytes, &source, "safetensors header"),
                    ],
                },
                None => NeedLine {
                    id: NeedId::Weights,
                    name: "weights",
                    bytes: w.bytes,
                    formula: format!("{n} file{} by their length", if n == 1 { "" } else { "s" }),
                    inputs: vec![Input::num("bytes", w.bytes, &source, "")],
                },
            }
        }
    };
    if let Some(d) = d {
        if let Some(q) = &d.quantization {
            line.inputs
                .push(Input::word("quantization", &q.value, &q.source, &q.key));
            line.formula += &format!(", {}", q.value);
        }
        if let Some(e) = &d.experts {
            line.inputs.push(e.input("experts"));
            let used = d.experts_used.as_ref().map_or(String::new(), |u| {
                line.inputs.push(u.input("experts_used"));
                format!(", {} read per token", u.value)
            });
            line.formula += &format!("; all {} experts resident{used}", e.value);
        }
    }
    line
}

/// What the runtime materialises past the weights and the cache while it
/// prefills: one chunk's activations (the MLP's gate and up projections,
/// the residual stream and attention's Q, K, V, O) and the last token's
/// logits in f32. mlx-lm prefills 2,048 tokens a step and evaluates only
/// the cache, with the activations MLX allocates at once (mlx.rs);
/// llama.cpp sizes its compute buffer (f32) for a 512-token ubatch with
/// its logits; transformers prefills the whole prompt at once.
fn runtime_line(d: &Description, runtime: Runtime, tokens: u64, source: &str) -> Option<NeedLine> {
    let hidden = d.hidden.as_ref()?;
    let inter = d.intermediate.as_ref().unwrap_or(hidden);
    let vocab = d.vocab.as_ref().map_or(0, |v| v.value);
    let act = super::mlx::act_bytes(d);
    let (rows, rows_said, act, logit_rows) = match runtime {
        Runtime::Mlx => (
            tokens.min(super::mlx::PREFILL_STEP),
            "mlx-lm's prefill step",
            act,
            1,
        ),
        Runtime::LlamaCpp => (
            tokens.min(LLAMA_UBATCH),
            "llama.cpp's n_ubatch, in f32",
            4,
            tokens.min(LLAMA_UBATCH),
        ),
        Runtime::Torch => (tokens, "transformers prefills the prompt at once", act, 1),
    };
    let (width, width_said) = match (runtime, super::mlx::row_elements(d)) {
        (Runtime::Mlx, Some(w)) => w,
        _ => (
            inter
                .value
                .saturating_mul(2)
                .saturating_add(hidden.value.saturating_mul(4)),
            format!(
                "(2 × {} intermediate + 4 × {} hidden)",
                thousands(inter.value),
                thousands(hidden.value)
            ),
        ),
    };
    let acts = u128::from(rows) * u128::from(width) * u128::from(act);
    let logits = u128::from(logit_rows) * u128::from(vocab) * 4;
    let bytes = u64::try_from(acts + logits).unwrap_or(u64::MAX);
    let mut inputs = vec![
        Input::num("rows", rows, source, ""),
        hidden.input("hidden"),
        inter.input("intermediate"),
    ];
    if let Some(v) = &d.vocab {
        inputs.push(v.input("vocab"));
    }
    let logits_said = if logit_rows == 1 {
        format!(
            "{} vocab × f32 4 B (the last token's logits)",
            thousands(vocab)
        )
    } else {
        format!(
            "{} × {} vocab × f32 4 B (logits)",
            thousands(logit_rows),
            thousands(vocab)
        )
    };
    Some(NeedLine {
        id: NeedId::Runtime,
        name: "runtime",
        bytes,
        formula: format!(
            "{} tokens ({rows_said}) × {width_said} × {act} B + {logits_said}",
            thousands(rows),
        ),
        inputs,
    })
}

/// `model-00001-of-00004.safetensors and 3 more`.
pub(crate) fn files_source(w: &super::Weights) -> String {
    match w.files.as_slice() {
        [] => "no file".into(),
        [one] => one.path.clone(),
        [first, rest @ ..] => format!("{} and {} more", first.path, rest.len()),
    }
}

#[cfg(test)]
#[path = "need_tests.rs"]
mod tests;
