//! JSON string escaping a word at a time, for the texts on every call's path (a tool's
//! answer, the activity line): the same bytes `serde_json` writes, found faster. Its
//! loop looks at each byte; here eight bytes at a time are checked for anything that
//! needs escaping (a control byte, `"` or `\`) and copied whole.

/// `0x01` in every byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte of a word.
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `w` that must be escaped in a JSON string (below
/// `0x20`, `"` or `\`). Bits above the lowest may be false (a borrow carries upward),
/// the lowest never is: it marks the first byte to escape.
#[inline(always)]
fn escape_mask(w: u64) -> u64 {
    let control = w.wrapping_sub(ONES * 0x20) & !w;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    (control | zero(quote) | zero(backslash)) & HIGHS
}

/// What each byte becomes inside a JSON string: 0 when it stays as it is, else the
/// escape's second character (`u` for `\u00XX`), as `serde_json` writes them.
const ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Appends the escape of `byte` (one [`ESCAPES`] names).
#[inline(always)]
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    let escape = ESCAPES[usize::from(byte)];
    if escape == b'u' {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]);
    } else {
        out.extend_from_slice(&[b'\\', escape]);
    }
}

/// Appends `s` to `out` as a JSON string, quotes included, byte for byte what
/// `serde_json` writes for it.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + bytes.len() / 8 + 2);
    out.push(b'"');
    // A word at a time: each is appended whole (one eight-byte store), then cut back to
    // the byte before the first one to escape, if any, which is escaped; the next word
    // starts after it. A text with an escape every few bytes (a JSON document as text)
    // costs a word per escape, with no copy of a variable length.
    let mut i = 0;
    while let Some(word) = bytes.get(i..i + 8) {
        let word: [u8; 8] = word.try_into().expect("eight bytes");
        out.extend_from_slice(&word);
        let mask = escape_mask(u64::from_le_bytes(word));
        if mask == 0 {
            i += 8;
            continue;
        }
        let clean = (mask.trailing_zeros() / 8) as usize;
        out.truncate(out.len() - 8 + clean);
        write_escape(out, word[clean]);
        i += clean + 1;
    }
    for &byte in &bytes[i..] {
        if ESCAPES[usize::from(byte)] == 0 {
            out.push(byte);
        } else {
            write_escape(out, byte);
        }
    }
    out.push(b'"');
}

/// `value` as compact JSON text, written into a buffer of `capacity` bytes to begin
/// with through [`JsonWriter`]; `serde_json::to_string`'s text, byte for byte.
pub fn to_json<T: serde::Serialize + ?Sized>(
    value: &T,
    capacity: usize,
) -> serde_json::Result<String> {
    let mut out = JsonWriter(Vec::with_capacity(capacity));
    serde_json::to_writer(&mut out, value)?;
    debug_assert!(std::str::from_utf8(&out.0).is_ok());
    // SAFETY: only `serde_json`'s serialiser wrote into `out` (the writer never leaves
    // this function), and it writes UTF-8 only: the `str`s it is given, ASCII
    // punctuation, digits and escapes (`serde_json::to_string` relies on the same).
    Ok(unsafe { String::from_utf8_unchecked(out.0) })
}

/// A JSON text being written by `serde_json` (an `io::Write`), for [`to_json`] only: the
/// serialiser is instantiated where the serialised type is (the bridge's own crate,
/// optimised for size), and writes many small fragments; these writes are inlined into
/// it, a one-byte write a push (out of line, each was a call, and at "s" a call to
/// `Vec::extend_from_slice`).
struct JsonWriter(Vec<u8>);

/// Inlined where `serde_json` is instantiated: it writes a string as three writes (its
/// quotes of one byte each apart).
impl std::io::Write for JsonWriter {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match buf {
            [byte] => self.0.push(*byte),
            _ => self.0.extend_from_slice(buf),
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Appends `n`'s decimal digits to `out`, as `serde_json` writes an unsigned integer:
/// two digits per division (an activity line writes three numbers, a millisecond
/// timestamp among them).
pub fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let (mut digits, mut at) = ([0u8; 20], 20);
    let mut pair = |at: &mut usize, two: u64| {
        let i = two as usize * 2;
        *at -= 2;
        digits[*at..*at + 2].copy_from_slice(&PAIRS[i..i + 2]);
    };
    while n >= 100 {
        pair(&mut at, n % 100);
        n /= 100;
    }
    if n >= 10 {
        pair(&mut at, n);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    out.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_character_is_escaped_as_serde_json_escapes_it() {
        // Every ASCII byte and some wider characters, alone, at every offset of a word
        // and beside one another.
        let mut chars: Vec<char> = (0u8..=0x7f).map(char::from).collect();
        chars.extend(['\u{e9}', '\u{7ff}', '\u{2028}', '\u{fffd}', '\u{1f600}']);
        for c in &chars {
            for pad in 0..17 {
                let s = format!("{}{c}{}", "a".repeat(pad), "b".repeat(16 - pad));
                assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
            }
        }
        let all: String = chars.iter().collect();
        for s in [String::new(), all.clone(), all.repeat(3), "\"".repeat(33)] {
            assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn mixed_strings_are_escaped_as_serde_json_escapes_them() {
        // Escapes, wide characters and plain bytes in every order (a fixed sequence of
        // pseudo-random picks), so that escapes meet word boundaries and one another.
        let alphabet = [
            'a',
            '"',
            '\\',
            '\n',
            '\u{1}',
            '\u{1f}',
            ' ',
            '\u{e9}',
            '\u{1f600}',
            '~',
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 41) as usize;
            let s: String = (0..len)
                .map(|k| alphabet[((state >> (k % 60)) as usize + k) % alphabet.len()])
                .collect();
            assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn numbers_are_written_as_serde_json_writes_them() {
        let powers = (0..20).flat_map(|e| {
            let p = 10u64.pow(e);
            [p - 1, p, p + 1, p.saturating_mul(7)]
        });
        let small = 0..20_000;
        let wide = [1_700_000_000_000, u64::MAX];
        for n in small.chain(wide).chain(powers) {
            let mut out = Vec::new();
            write_u64(&mut out, n);
            assert_eq!(out, serde_json::to_vec(&n).unwrap());
        }
    }
}
