//! GGUF metadata written by hand, as ggml's docs/gguf.md lays it out
//! ("File Structure"): the magic, a `u32` version, `u64` tensor and pair
//! counts, then each pair (a `u64`-long key, a `u32` type, the value),
//! little-endian. For the reader's tests and the fuzzer's seeds.

/// GGUF bytes being written; `.0` is the file so far.
pub struct Gguf(pub Vec<u8>);

impl Gguf {
    /// The header of a file of `version` that says it holds `pairs` pairs
    /// (and no tensors).
    pub fn new(version: u32, pairs: u64) -> Gguf {
        let mut b = b"GGUF".to_vec();
        b.extend(version.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend(pairs.to_le_bytes());
        Gguf(b)
    }

    /// A pair's key and value type (`ty`: 4 `u32`, 8 string, 9 array, …).
    pub fn key(&mut self, k: &str, ty: u32) -> &mut Self {
        self.0.extend((k.len() as u64).to_le_bytes());
        self.0.extend(k.as_bytes());
        self.0.extend(ty.to_le_bytes());
        self
    }

    /// A `u32` pair.
    pub fn u32(&mut self, k: &str, v: u32) -> &mut Self {
        self.key(k, 4);
        self.0.extend(v.to_le_bytes());
        self
    }

    /// A string pair.
    pub fn string(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k, 8);
        self.0.extend((v.len() as u64).to_le_bytes());
        self.0.extend(v.as_bytes());
        self
    }

    /// An array of strings (a tokenizer's tokens).
    pub fn strings(&mut self, k: &str, vs: &[&str]) -> &mut Self {
        self.key(k, 9);
        self.0.extend(8u32.to_le_bytes());
        self.0.extend((vs.len() as u64).to_le_bytes());
        for v in vs {
            self.0.extend((v.len() as u64).to_le_bytes());
            self.0.extend(v.as_bytes());
        }
        self
    }

    /// An array of `u32`s (per-layer head counts).
    pub fn u32s(&mut self, k: &str, vs: &[u32]) -> &mut Self {
        self.key(k, 9);
        self.0.extend(4u32.to_le_bytes());
        self.0.extend((vs.len() as u64).to_le_bytes());
        for v in vs {
            self.0.extend(v.to_le_bytes());
        }
        self
    }
}

/// The metadata of a GGUF laid out as Llama-3.1-8B's: 32 blocks, 32 heads,
/// 8 KV heads, a 131,072-token context, file type 15 (Q4_K_M), and three
/// tokens.
pub fn llama_31_8b() -> Vec<u8> {
    let mut g = Gguf::new(3, 9);
    g.string("general.architecture", "llama")
        .u32("llama.block_count", 32)
        .u32("llama.attention.head_count", 32)
        .u32("llama.attention.head_count_kv", 8)
        .u32("llama.embedding_length", 4096)
        .u32("llama.feed_forward_length", 14336)
        .u32("llama.context_length", 131072)
        .u32("general.file_type", 15)
        .strings("tokenizer.ggml.tokens", &["<s>", "a", "b"]);
    g.0
}
