//! Small PNG images made in code: 8-bit RGB, the pixels in stored (uncompressed) deflate blocks,
//! so that no image or compression library is needed.

/// What an image shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// A diagonal colour gradient.
    Gradient,
    /// A checkerboard of two colours.
    Checker,
}

impl Pattern {
    /// The pattern called `name`.
    pub(crate) fn parse(name: &str) -> Option<Pattern> {
        match name {
            "gradient" => Some(Pattern::Gradient),
            "checker" => Some(Pattern::Checker),
            _ => None,
        }
    }

    fn pixel(self, x: u32, y: u32, size: u32) -> [u8; 3] {
        let scale = |v: u32| (v * 255 / size.saturating_sub(1).max(1)) as u8;
        match self {
            Pattern::Gradient => [scale(x), scale(y), 255 - scale((x + y) / 2)],
            Pattern::Checker => {
                let cell = (size / 4).max(1);
                if (x / cell + y / cell).is_multiple_of(2) { [0x2b, 0x6c, 0xb0] } else { [0xf2, 0xf2, 0xf2] }
            }
        }
    }
}

/// A `size`×`size` PNG of `pattern`.
pub(crate) fn pattern(size: u32, pattern: Pattern) -> Vec<u8> {
    encode(size, size, |x, y| pattern.pixel(x, y, size))
}

/// Encode a `width`×`height` RGB image whose pixels `pixel(x, y)` gives.
pub(crate) fn encode(width: u32, height: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(((width * 3 + 1) * height) as usize);
    for y in 0..height {
        raw.push(0); // filter type: none
        for x in 0..width {
            raw.extend_from_slice(&pixel(x, y));
        }
    }
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, adaptive filters, no interlace
    chunk(&mut png, b"IHDR", &header);
    chunk(&mut png, b"IDAT", &zlib_stored(&raw));
    chunk(&mut png, b"IEND", &[]);
    png
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream of stored deflate blocks (at most 65535 bytes each).
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let mut blocks = data.chunks(65_535).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let last = u8::from(blocks.peek().is_none());
        let len = block.len() as u16;
        out.push(last);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunks of a PNG, each checked against its CRC.
    fn chunks(png: &[u8]) -> Vec<(String, Vec<u8>)> {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let mut rest = &png[8..];
        let mut out = Vec::new();
        while !rest.is_empty() {
            let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            let body = &rest[4..8 + len];
            let crc = u32::from_be_bytes(rest[8 + len..12 + len].try_into().unwrap());
            assert_eq!(crc32(body), crc, "CRC of {:?}", String::from_utf8_lossy(&body[..4]));
            out.push((String::from_utf8_lossy(&body[..4]).into_owned(), body[4..].to_vec()));
            rest = &rest[12 + len..];
        }
        out
    }

    /// Undo `zlib_stored`, checking the block headers and the Adler-32 trailer.
    fn inflate_stored(z: &[u8]) -> Vec<u8> {
        assert_eq!(&z[..2], &[0x78, 0x01]);
        let (mut i, mut out) = (2, Vec::new());
        loop {
            let last = z[i] & 1 == 1;
            let len = u16::from_le_bytes([z[i + 1], z[i + 2]]);
            assert_eq!(!len, u16::from_le_bytes([z[i + 3], z[i + 4]]));
            out.extend_from_slice(&z[i + 5..i + 5 + len as usize]);
            i += 5 + len as usize;
            if last {
                break;
            }
        }
        assert_eq!(u32::from_be_bytes(z[i..i + 4].try_into().unwrap()), adler32(&out));
        out
    }

    #[test]
    fn known_checksums() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
    }

    #[test]
    fn images_are_well_formed_pngs() {
        for (size, p) in [(1, Pattern::Gradient), (16, Pattern::Checker), (200, Pattern::Gradient)] {
            let png = pattern(size, p);
            let chunks = chunks(&png);
            let kinds: Vec<&str> = chunks.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(kinds, ["IHDR", "IDAT", "IEND"]);
            let header = &chunks[0].1;
            assert_eq!(u32::from_be_bytes(header[..4].try_into().unwrap()), size);
            assert_eq!(u32::from_be_bytes(header[4..8].try_into().unwrap()), size);
            let pixels = inflate_stored(&chunks[1].1);
            assert_eq!(pixels.len(), (size * 3 + 1) as usize * size as usize, "one filter byte and RGB per row");
        }
        assert_eq!(Pattern::parse("checker"), Some(Pattern::Checker));
        assert_eq!(Pattern::parse("plaid"), None);
    }
}
