//! A GGUF file's metadata, read without its tensors. The layout (ggml's
//! docs/gguf.md, "File Structure"), little-endian: the magic `GGUF`, a
//! `uint32` version (2 and 3 are read; 1 had 32-bit lengths), a `uint64`
//! tensor count and a `uint64` count of key/value pairs; then each pair: a
//! string key (`uint64` length + bytes), a `uint32` value type (0 `uint8`,
//! 1 `int8`, 2 `uint16`, 3 `int16`, 4 `uint32`, 5 `int32`, 6 `float32`,
//! 7 `bool`, 8 string, 9 array: `uint32` type + `uint64` count + values,
//! 10 `uint64`, 11 `int64`, 12 `float64`) and the value.
//!
//! Every length is checked against the bytes there before it is used, so a
//! hostile count ends the read, not the process; arrays nest at most
//! `MAX_DEPTH` (3) deep.

use std::collections::BTreeMap;

/// Arrays of arrays read this deep at most.
const MAX_DEPTH: u32 = 3;

/// A value kept from the metadata: numbers, words, and an array's length
/// (with its numbers where it holds numbers: per-layer head counts).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Any integer or bool.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Text(String),
    /// An array: its length, and its integers where it holds integers.
    Array {
        /// Its elements.
        len: u64,
        /// Its integers (the first 65,536), where it holds integers.
        ints: Vec<i128>,
    },
}

impl Value {
    /// A count: a non-negative integer, or the largest of an array of them.
    pub fn count(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            Value::Array { ints, .. } if !ints.is_empty() => {
                u64::try_from(*ints.iter().max()?).ok()
            }
            _ => None,
        }
    }
}

/// Why the metadata was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GgufError {
    /// The bytes end before the metadata does: read more, up to the cap.
    Truncated,
    /// Not GGUF, or a GGUF this does not read.
    Bad(String),
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], GgufError> {
        let n = usize::try_from(n).map_err(|_| GgufError::Truncated)?;
        let end = self.at.checked_add(n).ok_or(GgufError::Truncated)?;
        let s = self.b.get(self.at..end).ok_or(GgufError::Truncated)?;
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    fn u64(&mut self) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }
    fn string(&mut self) -> Result<&'a [u8], GgufError> {
        let n = self.u64()?;
        self.take(n)
    }
    fn scalar(&mut self, ty: u32) -> Result<Option<Value>, GgufError> {
        let le = |b: &[u8]| -> i128 {
            let mut w = [0u8; 16];
            w[..b.len()].copy_from_slice(b);
            i128::from_le_bytes(w)
        };
        Ok(Some(match ty {
            0 | 7 => Value::Int(i128::from(self.take(1)?[0])),
            1 => Value::Int(i128::from(self.take(1)?[0] as i8)),
            2 => Value::Int(le(self.take(2)?)),
            3 => Value::Int(i128::from(i16::from_le_bytes(
                self.take(2)?.try_into().unwrap_or_default(),
            ))),
            4 => Value::Int(le(self.take(4)?)),
            5 => Value::Int(i128::from(self.u32()? as i32)),
            6 => Value::Float(f64::from(f32::from_bits(self.u32()?))),
            10 => Value::Int(le(self.take(8)?)),
            11 => Value::Int(i128::from(self.u64()? as i64)),
            12 => Value::Float(f64::from_bits(self.u64()?)),
            8 => Value::Text(String::from_utf8_lossy(self.string()?).into_owned()),
            _ => return Ok(None),
        }))
    }
    fn value(&mut self, ty: u32, depth: u32) -> Result<Value, GgufError> {
        if ty != 9 {
            return self
                .scalar(ty)?
                .ok_or_else(|| GgufError::Bad(format!("unknown value type {ty}")));
        }
        if depth >= MAX_DEPTH {
            return Err(GgufError::Bad("arrays nested too deep".into()));
        }
        let inner = self.u32()?;
        let len = self.u64()?;
        // Each element takes at least a byte: a count past the bytes left
        // is not iterated.
        if len > (self.b.len() - self.at) as u64 {
            return Err(GgufError::Truncated);
        }
        let mut ints = Vec::new();
        for _ in 0..len {
            match self.value(inner, depth + 1)? {
                Value::Int(i) if ints.len() < 1 << 16 => ints.push(i),
                _ => {}
            }
        }
        Ok(Value::Array { len, ints })
    }
}

/// The metadata of a GGUF file from its first bytes: each key with its
/// value. [`GgufError::Truncated`] where `bytes` ends inside it.
pub fn read_metadata(bytes: &[u8]) -> Result<BTreeMap<String, Value>, GgufError> {
    let mut c = Cursor { b: bytes, at: 0 };
    if c.take(4)? != b"GGUF" {
        return Err(GgufError::Bad("no GGUF magic: not a GGUF file".into()));
    }
    let version = c.u32()?;
    if version.swap_bytes() == 2 || version.swap_bytes() == 3 {
        return Err(GgufError::Bad("a big-endian GGUF: not read".into()));
    }
    if !(2..=3).contains(&version) {
        return Err(GgufError::Bad(format!(
            "GGUF version {version}: only 2 and 3 are read"
        )));
    }
    let _tensors = c.u64()?;
    let pairs = c.u64()?;
    let mut out = BTreeMap::new();
    for _ in 0..pairs {
        let key = String::from_utf8_lossy(c.string()?).into_owned();
        let ty = c.u32()?;
        let v = c.value(ty, 0)?;
        out.insert(key, v);
    }
    Ok(out)
}

/// `general.file_type` as llama.cpp names it (`llama_ftype`).
pub fn file_type_name(t: u64) -> String {
    let name = match t {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        32 => "BF16",
        _ => return format!("type {t}"),
    };
    name.to_string()
}
