//! The push's credentials: from a file (`--push-auth-file`) or the
//! environment (`SWAPSIGHT_PUSH_TOKEN`), never from the command line, where
//! `ps` shows them to every user. They leave this module only as the
//! `Authorization` header's value, which nothing prints: [`Secret`]'s
//! `Debug` hides it.

use std::path::Path;

/// The environment variable holding a bearer token.
pub const TOKEN_ENV: &str = "SWAPSIGHT_PUSH_TOKEN";

/// The longest credentials file read: a token is a few hundred bytes.
const MAX_FILE: u64 = 16 * 1024;

/// An `Authorization` header value; shown as `Secret(…)`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The header's value, for the request only.
    pub fn header(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// The credentials of `--push-auth-file` (`file`) or of `env_token` (the
/// value of [`TOKEN_ENV`]); `None` without either. Both at once is an
/// error: which one wins would be a guess.
pub fn credentials(
    file: Option<&Path>,
    env_token: Option<String>,
) -> Result<Option<Secret>, String> {
    let env_token = env_token.filter(|t| !t.trim().is_empty());
    match (file, env_token) {
        (Some(_), Some(_)) => Err(format!(
            "both --push-auth-file and {TOKEN_ENV} are set: give the credentials one way"
        )),
        (Some(path), None) => {
            let text = read_small(path)?;
            parse(&text)
                .map(Some)
                .map_err(|why| format!("--push-auth-file {}: {why}", path.display()))
        }
        (None, Some(token)) => bearer(token.trim())
            .map(Some)
            .map_err(|why| format!("{TOKEN_ENV}: {why}")),
        (None, None) => Ok(None),
    }
}

/// The file's text, refused when unreadable or too large to be a token.
fn read_small(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path)
        .map_err(|e| format!("cannot read --push-auth-file {shown}: {e}"))?;
    let mut text = String::new();
    file.take(MAX_FILE + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read --push-auth-file {shown}: {e}"))?;
    if text.len() as u64 > MAX_FILE {
        return Err(format!(
            "--push-auth-file {shown} is larger than {MAX_FILE} bytes: not a credentials file"
        ));
    }
    Ok(text)
}

/// `bearer TOKEN` or `basic USER:PASSWORD`, on the file's first line that
/// is not blank or a `#` comment; the word in any case.
pub fn parse(text: &str) -> Result<Secret, String> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .ok_or("it is empty: write `bearer TOKEN` or `basic USER:PASSWORD` in it")?;
    let (kind, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    match kind.to_ascii_lowercase().as_str() {
        "bearer" => bearer(rest),
        "basic" => basic(rest),
        _ => Err("expected `bearer TOKEN` or `basic USER:PASSWORD`".into()),
    }
}

fn bearer(token: &str) -> Result<Secret, String> {
    if token.is_empty() {
        return Err("the token is empty".into());
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the token must be printable ASCII without spaces".into());
    }
    Ok(Secret(format!("Bearer {token}")))
}

fn basic(user_pass: &str) -> Result<Secret, String> {
    let Some((user, _)) = user_pass.split_once(':') else {
        return Err("basic needs USER:PASSWORD".into());
    };
    if user.is_empty() {
        return Err("basic needs a user before the ':'".into());
    }
    if user_pass.chars().any(char::is_control) {
        return Err("the user and password must not hold control characters".into());
    }
    Ok(Secret(format!("Basic {}", base64(user_pass.as_bytes()))))
}

/// Standard base64 with padding (RFC 4648 §4), for basic auth's header.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
    }

    #[test]
    fn a_file_holds_bearer_or_basic_after_comments() {
        assert_eq!(
            parse("# for mimir\n\n  Bearer abc.def-1  \n")
                .unwrap()
                .header(),
            "Bearer abc.def-1"
        );
        // Aladdin:open sesame, RFC 7617's example.
        assert_eq!(
            parse("basic Aladdin:open sesame\n").unwrap().header(),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        for bad in [
            "",
            "# only\n",
            "token abc",
            "bearer",
            "basic nopass",
            "basic :x",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_secret_is_never_shown_by_debug() {
        let s = parse("bearer hunter2hunter2").unwrap();
        assert_eq!(format!("{s:?}"), "Secret(…)");
        assert!(!format!("{:?}", Some(s)).contains("hunter2"));
    }

    #[test]
    fn the_file_or_the_environment_but_not_both() {
        assert_eq!(credentials(None, None), Ok(None));
        assert_eq!(credentials(None, Some("  ".into())), Ok(None));
        assert_eq!(
            credentials(None, Some("tok123".into()))
                .unwrap()
                .unwrap()
                .header(),
            "Bearer tok123"
        );
        let err = credentials(Some(Path::new("/x")), Some("t".into())).unwrap_err();
        assert!(err.contains("one way"), "{err}");
        let err = credentials(Some(Path::new("/nonexistent/auth")), None).unwrap_err();
        assert!(
            err.starts_with("cannot read --push-auth-file /nonexistent/auth"),
            "{err}"
        );
    }
}
