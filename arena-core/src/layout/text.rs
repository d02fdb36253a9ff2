//! A fixed-capacity text buffer that works in `const fn`, so layout reports and assertion messages
//! can be built while the compiler evaluates a constant.
//!
//! The buffer is a window onto a longer text: it keeps the bytes from `skip` to `skip + CAP` and
//! counts the rest. `Display` uses that to stream a long report through a small buffer, one window
//! at a time, with the same writer the compile-time messages use.

/// Text written in `const` context into `CAP` bytes.
#[derive(Clone, Copy)]
pub struct Text<const CAP: usize> {
    buf: [u8; CAP],
    len: usize,
    skip: usize,
    total: usize,
}

impl<const CAP: usize> Text<CAP> {
    /// An empty text keeping the first `CAP` bytes written.
    pub const fn new() -> Self {
        Self::window(0)
    }

    /// An empty text keeping bytes `skip..skip + CAP` of what is written.
    pub const fn window(skip: usize) -> Self {
        Text {
            buf: [0; CAP],
            len: 0,
            skip,
            total: 0,
        }
    }

    /// Whether bytes were written past the end of the window.
    pub const fn overflowed(&self) -> bool {
        self.total > self.skip + self.len
    }

    /// Everything written so far, including what fell outside the window.
    pub const fn total_len(&self) -> usize {
        self.total
    }

    /// The kept bytes, cut back to the last whole UTF-8 character.
    pub const fn as_str(&self) -> &str {
        let bytes = self.buf.split_at(self.len).0;
        match core::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => match core::str::from_utf8(bytes.split_at(e.valid_up_to()).0) {
                Ok(s) => s,
                Err(_) => "",
            },
        }
    }

    const fn byte(&mut self, b: u8) {
        if self.total >= self.skip && self.len < CAP {
            self.buf[self.len] = b;
            self.len += 1;
        }
        self.total += 1;
    }

    /// Appends `s`.
    pub const fn str(&mut self, s: &str) {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            self.byte(b[i]);
            i += 1;
        }
    }

    /// Appends `s` followed by spaces up to `width` characters.
    pub const fn str_left(&mut self, s: &str, width: usize) {
        self.str(s);
        self.spaces(width.saturating_sub(char_count(s)));
    }

    /// Appends `n` spaces.
    pub const fn spaces(&mut self, n: usize) {
        let mut i = 0;
        while i < n {
            self.byte(b' ');
            i += 1;
        }
    }

    /// Appends `n` in decimal.
    pub const fn num(&mut self, n: usize) {
        let mut digits = [0u8; 20];
        let mut count = 0;
        let mut rest = n;
        loop {
            digits[count] = b'0' + (rest % 10) as u8;
            count += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            self.byte(digits[count]);
        }
    }

    /// Appends `n` in decimal, right-aligned in `width` characters.
    pub const fn num_right(&mut self, n: usize, width: usize) {
        self.spaces(width.saturating_sub(digit_count(n)));
        self.num(n);
    }
}

impl<const CAP: usize> Default for Text<CAP> {
    fn default() -> Self {
        Self::new()
    }
}

/// How many decimal digits `n` prints as.
pub const fn digit_count(mut n: usize) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

/// How many characters (not bytes) `s` holds, so columns line up for non-ASCII names.
pub const fn char_count(s: &str) -> usize {
    let b = s.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] & 0xC0 != 0x80 {
            count += 1;
        }
        i += 1;
    }
    count
}
