//! A cursor over stored bytes, shared by the formats that retrieval reads back from its
//! state (the BM25 index, the definition table): every read is bounds-checked and answers
//! `None` past the end, so a truncated file is an error, never a panic.

pub(crate) struct Cursor<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    /// `n` little-endian `u32`s.
    pub(crate) fn u32_array(&mut self, n: usize) -> Option<Vec<u32>> {
        let raw = self.take(n.checked_mul(4)?)?;
        Some(
            raw.chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }

    /// A count, then that many `u32`s.
    pub(crate) fn counted_u32s(&mut self) -> Option<Vec<u32>> {
        let n = self.u32()? as usize;
        self.u32_array(n)
    }
}
