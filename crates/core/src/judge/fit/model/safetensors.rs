//! A safetensors file's header, read without its data. The layout
//! (huggingface/safetensors, README "Format"): 8 bytes, an unsigned
//! little-endian 64-bit N; N bytes of UTF-8 JSON, an object mapping each
//! tensor's name to `{"dtype", "shape", "data_offsets": [begin, end]}`
//! (offsets into the bytes after the header) and an optional
//! `__metadata__` of strings; then the data.
//!
//! Nothing in the header is trusted: its length is capped, each tensor's
//! size is computed from its dtype and shape with checked arithmetic and
//! must match its offsets, and the offsets must lie within the file.

/// The largest header read: safetensors' own reader refuses larger
/// (`MAX_HEADER_SIZE`, 100,000,000 bytes).
pub const MAX_HEADER: u64 = 100_000_000;

/// What a header says of its tensors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TensorSum {
    /// Tensors listed.
    pub tensors: u64,
    /// Σ of their elements (packed elements for a quantized model: MLX
    /// stores 4-bit weights as U32).
    pub elements: u64,
    /// Σ of their bytes: what they take in memory at their dtype.
    pub bytes: u64,
}

/// The header's length from the file's first 8 bytes, checked against the
/// cap and the file's length.
pub fn header_len(first8: &[u8], file_len: u64) -> Result<u64, String> {
    let raw: [u8; 8] = first8
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or("shorter than the 8 bytes of a safetensors header's length")?;
    let n = u64::from_le_bytes(raw);
    if n == 0 {
        return Err("header length 0: not a safetensors file (or not downloaded)".into());
    }
    if n > MAX_HEADER {
        return Err(format!(
            "header length {n} is above safetensors' own cap ({MAX_HEADER})"
        ));
    }
    if n > file_len.saturating_sub(8) {
        return Err(format!(
            "header length {n} runs past the end of the file ({file_len} bytes)"
        ));
    }
    Ok(n)
}

/// Bits per element of a safetensors dtype.
fn dtype_bits(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" | "F8_E8M0" => 8,
        "I16" | "U16" | "F16" | "BF16" => 16,
        "I32" | "U32" | "F32" => 32,
        "I64" | "U64" | "F64" | "C64" => 64,
        "F4" => 4,
        "F6_E2M3" | "F6_E3M2" => 6,
        _ => return None,
    })
}

/// Sums the tensors of a header (`json`, the N bytes after the length)
/// whose data is `data_len` bytes (the file's length less 8 + N).
pub fn sum_header(json: &[u8], data_len: u64) -> Result<TensorSum, String> {
    let v: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| format!("header is not JSON ({e})"))?;
    let map = v.as_object().ok_or("header is not a JSON object")?;
    let mut sum = TensorSum::default();
    for (name, t) in map {
        if name == "__metadata__" {
            continue;
        }
        let name = crate::util::text::clean(name);
        let bad = |why: &str| format!("tensor {name}: {why}");
        let dtype = t
            .get("dtype")
            .and_then(|d| d.as_str())
            .ok_or_else(|| bad("no dtype"))?;
        let bits = dtype_bits(dtype).ok_or_else(|| {
            bad(&format!(
                "unknown dtype {}",
                crate::util::text::clean(dtype)
            ))
        })?;
        let shape = t
            .get("shape")
            .and_then(|s| s.as_array())
            .ok_or_else(|| bad("no shape"))?;
        let mut elements: u64 = 1;
        for d in shape {
            let d = d
                .as_u64()
                .ok_or_else(|| bad("a dimension that is not a count"))?;
            elements = elements
                .checked_mul(d)
                .ok_or_else(|| bad("its shape overflows"))?;
        }
        let bytes = elements
            .checked_mul(bits)
            .map(|b| b.div_ceil(8))
            .ok_or_else(|| bad("its size overflows"))?;
        let offsets = t
            .get("data_offsets")
            .and_then(|o| o.as_array())
            .filter(|o| o.len() == 2)
            .and_then(|o| Some((o[0].as_u64()?, o[1].as_u64()?)))
            .ok_or_else(|| bad("no data_offsets [begin, end]"))?;
        if offsets.1 < offsets.0 || offsets.1 - offsets.0 != bytes {
            return Err(bad(&format!(
                "data_offsets {:?} do not hold {bytes} bytes ({dtype} × {elements})",
                [offsets.0, offsets.1]
            )));
        }
        if offsets.1 > data_len {
            return Err(bad(&format!(
                "data_offsets end at {}, past the file's {data_len} bytes of data",
                offsets.1
            )));
        }
        sum.tensors += 1;
        sum.elements = sum.elements.saturating_add(elements);
        sum.bytes = sum.bytes.saturating_add(bytes);
    }
    Ok(sum)
}
