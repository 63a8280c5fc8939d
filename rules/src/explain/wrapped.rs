//! Messages wrapped over several lines. A console (PowerShell, cmd) breaks a long line at its width, in
//! the middle of a word; an issue thread or a mail breaks it at a space; `kubectl describe` indents the
//! continuation lines of a message that holds line breaks. A signature's text cut by such a break is on
//! no line alone, and a line that names no operation does not say whether it is the pod sandbox's.
//! [`Wrapped`] keeps the message being read, and the explainer explains it once, as if on one line,
//! when the next line starts another. A line goes on the message when:
//!
//! * a signature's text runs across the break (read with the break removed, or as one space: a break at
//!   a space drops it, a console's break in a word does not), or
//! * the message holds part of a signature that needs several texts (`any` and `all`): the rest may
//!   follow, or
//! * the line before the break ends with a blank: it was broken at a space that the break kept, or
//! * a console's break: the line before it is long (at least [`WRAP_WIDTH`] characters) and as long
//!   as the message's first line, the second line of a message starts with no blank, and the line does
//!   not start with the message's first word (a log's next record does: `E1127`, a repeated message).
//!
//! Lines are surely one message when a signature's text crossed a break, after a kept space, when a
//! join completed a signature, or when two lines show a console's width. Lines joined otherwise (a long
//! line, then one at column 0; lines after part of a signature that the rest never followed) are
//! explained line by line.
//!
//! Bounded, so that reading stays linear in the input: at most [`MAX_WRAP_LINES`] lines and
//! [`MAX_LINE`] bytes are joined into one message; a break is tested on a window of the longest
//! needle's length on each side of it, and the joined text is matched only when that window or a
//! pending signature calls for it.

use super::clean::MAX_LINE;
use super::signatures::{SIGNATURES, Signature};

/// The most lines joined into one message: a kubelet error of a kilobyte on an 80-column console (a
/// longer one is read in parts of this many lines, a signature's text sits in neighbouring lines).
pub(crate) const MAX_WRAP_LINES: usize = 16;

/// The shortest line, in characters, that a console's wrap is taken for: consoles are 80 columns wide
/// or more.
pub(crate) const WRAP_WIDTH: usize = 60;

/// The message being read: its lines joined so far.
#[derive(Debug, Default)]
pub(crate) struct Wrapped {
    text: String,
    /// Its first line's number.
    first: u64,
    /// How many lines it joins.
    lines: usize,
    /// Where each of its lines after the first starts in `text` (after the separator), for a message
    /// that is not sure.
    starts: Vec<usize>,
    /// Characters of its first line, and of its last, as written.
    first_len: usize,
    last_len: usize,
    /// Its lines are surely one message: joined where a signature's text crossed a break, after a kept
    /// space, to complete a signature, or by a console's width seen on two lines.
    sure: bool,
    /// It holds part of a signature with `all` texts, not all of it.
    pending: bool,
    /// The first word of its first line (at most [`FIRST_WORD`] bytes): a line that starts with it is
    /// the next record of a log, not a console's continuation.
    first_word: String,
}

/// The most bytes of a message's first word compared with the next line's start.
const FIRST_WORD: usize = 16;

/// The first word of `text` (up to its first blank), at most [`FIRST_WORD`] bytes.
fn first_word(text: &str) -> &str {
    let word = text.split([' ', '\t']).next().unwrap_or("");
    let mut end = word.len().min(FIRST_WORD);
    while !word.is_char_boundary(end) {
        end -= 1;
    }
    &word[..end]
}

impl Wrapped {
    /// Starts a message at `text` (`width` characters as it was written, before cleaning), line
    /// `number`; reuses the buffer of `previous` when there is one.
    pub(crate) fn start(
        previous: Option<Wrapped>,
        text: &str,
        width: usize,
        number: u64,
    ) -> Wrapped {
        let mut buffer = previous.map(|w| w.text).unwrap_or_default();
        buffer.clear();
        if text.len() <= MAX_LINE {
            buffer.push_str(text);
        }
        Wrapped {
            pending: pending(&buffer),
            first_word: first_word(text).to_string(),
            text: buffer,
            first: number,
            lines: 1,
            starts: Vec::new(),
            first_len: width,
            last_len: width,
            sure: false,
        }
    }

    /// The parts to explain, each with its first line's number: the whole message when it is surely
    /// one (or one line), else each of its lines on its own.
    pub(crate) fn parts(&self) -> Vec<(&str, u64)> {
        if self.sure || self.starts.is_empty() {
            return vec![(&self.text, self.first)];
        }
        let mut parts = Vec::with_capacity(self.starts.len() + 1);
        let mut from = 0;
        for (n, &start) in (self.first..).zip(&self.starts) {
            parts.push((self.text[from..start].trim_end(), n));
            from = start;
        }
        parts.push((&self.text[from..], self.first + self.starts.len() as u64));
        parts
    }

    /// Joins `next` (`width` characters as written) to the message when the break between them is a
    /// wrap ([module docs](self)); `false` when `next` starts another message.
    pub(crate) fn join(&mut self, next: &str, width: usize) -> bool {
        if self.lines >= MAX_WRAP_LINES || self.text.is_empty() {
            return false;
        }
        let head = next.trim_start();
        let tail = self.text.trim_end();
        if head.is_empty() || tail.len() + 1 + head.len() > MAX_LINE {
            return false;
        }
        // A console breaks every line of a message at its width and goes on at column 0: a long line
        // followed by one that starts with no blank; sure once two lines show the same width.
        let console = self.last_len >= WRAP_WIDTH
            && (self.first_word.is_empty() || !next.starts_with(&self.first_word))
            && if self.lines == 1 {
                head.len() == next.len()
            } else {
                self.last_len == self.first_len
            };
        // A break next to a blank (kept at the end of the line, or an indented continuation) was at a
        // space. Else a console's break removes nothing, even inside a word, and an editor's drops a
        // space: a signature's text across the break says which, or the console's width.
        let at_space = head.len() != next.len() || tail.len() != self.text.len();
        let sep = if at_space {
            " "
        } else if crosses(tail, "", head) {
            ""
        } else if crosses(tail, " ", head) || !console {
            " "
        } else {
            ""
        };
        let crossing = crosses(tail, sep, head);
        // A line that ends with a blank was broken at a space that the break kept.
        let kept_space = tail.len() != self.text.len();
        // Part of a signature waits for the rest: the next lines go on the message (sure once the join
        // completes the signature).
        let completes = self.pending && completes_pending(tail, sep, head);
        if !crossing && !kept_space && !self.pending && !console {
            return false;
        }
        self.sure |= crossing
            || kept_space
            || completes
            || (console && self.lines >= 2 && self.last_len == self.first_len);
        let cut = tail.len();
        self.text.truncate(cut);
        self.text.push_str(sep);
        self.starts.push(self.text.len());
        self.text.push_str(head);
        self.lines += 1;
        self.last_len = width;
        self.pending = pending(&self.text);
        true
    }
}

/// Whether `tail`, `sep` and `head` joined hold all of a signature that `tail` holds part of.
fn completes_pending(tail: &str, sep: &str, head: &str) -> bool {
    let joined = format!("{tail}{sep}{head}");
    SIGNATURES
        .iter()
        .any(|s| partly(s, tail) && holds(s, &joined))
}

/// Whether `text` holds all of signature `s` (one of its `any` texts and all of its `all` texts).
fn holds(s: &Signature, text: &str) -> bool {
    s.any.iter().any(|n| text.contains(n)) && s.all.iter().all(|n| text.contains(n))
}

/// Whether `text` holds part of signature `s` (one with `all` texts), not all of it.
fn partly(s: &Signature, text: &str) -> bool {
    !s.all.is_empty() && s.any.iter().chain(s.all).any(|n| text.contains(n)) && !holds(s, text)
}

/// Whether a signature's text runs across the break between `tail` and `head` joined by `sep`: tested
/// on the longest needle's length on each side of the break.
fn crosses(tail: &str, sep: &str, head: &str) -> bool {
    let reach = longest_needle();
    let mut from = tail.len().saturating_sub(reach);
    while !tail.is_char_boundary(from) {
        from += 1;
    }
    let mut to = head.len().min(reach);
    while !head.is_char_boundary(to) {
        to -= 1;
    }
    let before = &tail[from..];
    let window = format!("{before}{sep}{}", &head[..to]);
    let (start, end) = (before.len(), before.len() + sep.len());
    needles().any(|needle| {
        window
            .match_indices(needle)
            .any(|(at, n)| at < start && at + n.len() > end)
    })
}

/// Every needle of the signatures (`any` and `all`).
fn needles() -> impl Iterator<Item = &'static str> {
    SIGNATURES
        .iter()
        .flat_map(|s| s.any.iter().chain(s.all))
        .copied()
}

/// The longest needle, in bytes.
fn longest_needle() -> usize {
    needles().map(str::len).max().unwrap_or(0)
}

/// Whether `text` holds part of a signature with `all` texts, not all of it (the rest may follow on the
/// next line).
fn pending(text: &str) -> bool {
    SIGNATURES.iter().any(|s| partly(s, text))
}
