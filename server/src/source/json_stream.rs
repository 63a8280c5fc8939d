//! A JSON snapshot read from its file a window at a time, so that its text is never held whole (issue
//! 40: at the envelope the text is 294 MB, a third of what `audit --snapshot` held at its peak).
//!
//! The file is read in blocks of [`BLOCK`] bytes; the top-level object's members are found by their
//! brackets and quotes, and each item of its `items` array is handed, as its own slice of text, to the
//! decoder of list items (`cluster_objects::decode_json_listed`): a Pod is decoded narrowly, into what the
//! audit reads of every pod, and whole only when it is the first of its template this thread meets
//! (`docs/reference/snapshots.md`, "What is read of each pod"); made whole, an item is the object the
//! whole-text reader decodes. The other members are parsed and dropped (`kind` read). The items are
//! decoded in batches, every other one on a second thread, and handed on in the file's order.
//!
//! Only a clean file is read here: at the first thing that is not (a syntax error, bytes that are not
//! UTF-8, an item that does not decode or is incomplete, a file without `items`, a file larger than the
//! cap), [`read`] returns [`Streamed::Again`] and the caller reads the file whole with
//! [`objects::read`](super::objects::read), which says what is wrong with the file's own words and line
//! numbers. A bad file is rare and costs a second reading; a good one costs a window.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use serde::de::IgnoredAny;
use winplace_rules::audit::owner::TemplatesMet;
use winplace_rules::model::cluster_objects::{self, ClusterObject};

use super::objects::{MAX_SNAPSHOT_BYTES, Tally, incomplete};

/// Bytes read from the file at a time.
const BLOCK: usize = 1 << 20;

/// What [`read`] did.
#[derive(Debug)]
pub enum Streamed {
    /// The file was read to its end; every object went to the sink.
    Read(Tally),
    /// The file could not be streamed (not a regular file, not a JSON list, too large, or something in
    /// it is wrong): read it whole. The sink may have been given some objects already: discard them.
    Again,
}

/// Reads the JSON list in `path`, handing each Node, Pod, RuntimeClass and explained Event to `sink`
/// as soon as it is decoded (see the module documentation for when it gives up).
pub fn read(path: &Path, sink: &mut dyn FnMut(ClusterObject)) -> Streamed {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() <= MAX_SNAPSHOT_BYTES => {}
        _ => return Streamed::Again,
    }
    let Ok(file) = std::fs::File::open(path) else {
        return Streamed::Again;
    };
    read_from(file.take(MAX_SNAPSHOT_BYTES + 1), BLOCK, BATCH_ITEMS, sink)
}

/// [`read`] of what `reader` gives, `block` bytes at a time, decoded `batch` items at a time.
fn read_from(
    reader: impl Read,
    block: usize,
    batch: usize,
    sink: &mut dyn FnMut(ClusterObject),
) -> Streamed {
    let mut window = Window {
        reader,
        block,
        data: Vec::with_capacity(block),
        pos: 0,
        eof: false,
        total: 0,
    };
    let mut tally = Tally::default();
    match list(&mut window, batch, &mut tally, sink) {
        Some(()) => Streamed::Read(tally),
        None => Streamed::Again,
    }
}

/// The unread part of the file: `data[pos..]`, refilled a block at a time.
struct Window<R> {
    reader: R,
    /// Bytes read at a time.
    block: usize,
    data: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Bytes read so far: past [`MAX_SNAPSHOT_BYTES`], the file grew over the cap while it was read.
    total: u64,
}

impl<R: Read> Window<R> {
    /// Drops what was consumed (`data[..pos]`) and reads another block after what is held; `false` at
    /// the end of the file (or on a read error: the whole-text reading reports it). What is held moves
    /// to the front either way.
    fn more(&mut self) -> bool {
        if self.pos > 0 {
            self.data.drain(..self.pos);
            self.pos = 0;
        }
        if self.eof {
            return false;
        }
        let held = self.data.len();
        self.data.resize(held + self.block, 0);
        let read = loop {
            match self.reader.read(&mut self.data[held..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break 0,
            }
        };
        self.data.truncate(held + read);
        self.total += read as u64;
        if read == 0 {
            self.eof = true;
        }
        read > 0
    }

    /// The next byte that is not JSON white space, left unconsumed.
    fn peek_token(&mut self) -> Option<u8> {
        loop {
            while let Some(&b) = self.data.get(self.pos) {
                if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                    return Some(b);
                }
                self.pos += 1;
            }
            if !self.more() {
                return None;
            }
        }
    }

    /// The next byte that is not JSON white space, consumed.
    fn next_token(&mut self) -> Option<u8> {
        let b = self.peek_token()?;
        self.pos += 1;
        Some(b)
    }

    /// The next value (white space before it skipped), consumed, as the range of `data` it spans until
    /// the next call: an object or array to its closing bracket, a string to its closing quote, a number
    /// or literal to the byte that ends it. Its syntax inside is checked by whoever parses the slice.
    fn value(&mut self) -> Option<std::ops::Range<usize>> {
        let first = self.next_token()?;
        let mut start = self.pos - 1;
        let mut at = self.pos;
        let scalar = !matches!(first, b'{' | b'[' | b'"');
        let mut depth = usize::from(matches!(first, b'{' | b'['));
        let mut in_string = first == b'"';
        let mut escaped = false;
        loop {
            if in_string && !escaped {
                // Most of a snapshot is strings: skip to the next quote or backslash.
                let rest = self.data.get(at..).unwrap_or_default();
                at += memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
            }
            let Some(&b) = self.data.get(at) else {
                // Refill, keeping the value: `more` drops what comes before `pos` and moves the rest to
                // the front.
                self.pos = start;
                let more = self.more();
                at -= start;
                start = 0;
                if more {
                    continue;
                }
                if scalar {
                    // A number or literal at the very end: it ends there.
                    break;
                }
                return None;
            };
            if scalar {
                if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                at += 1;
                continue;
            }
            at += 1;
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                    if depth == 0 {
                        break;
                    }
                }
            } else {
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        self.pos = at;
        Some(start..at)
    }

    /// The text of a range [`Window::value`] returned, when it is UTF-8.
    fn text(&self, range: std::ops::Range<usize>) -> Option<&str> {
        std::str::from_utf8(self.data.get(range)?).ok()
    }
}

/// The top-level object: every member parsed, the items handed on; `Some` when it is a complete
/// `List` (items and a kind) followed by nothing but white space.
fn list<R: Read>(
    w: &mut Window<R>,
    batch: usize,
    tally: &mut Tally,
    sink: &mut dyn FnMut(ClusterObject),
) -> Option<()> {
    if w.next_token()? != b'{' || w.peek_token()? == b'}' {
        return None;
    }
    let (mut items, mut kind) = (false, false);
    loop {
        let key = w.value()?;
        let key: Cow<'_, str> = serde_json::from_str(w.text(key)?).ok()?;
        let key = key.into_owned();
        if w.next_token()? != b':' {
            return None;
        }
        match key.as_str() {
            "items" => {
                items_of(w, batch, tally, sink)?;
                items = true;
            }
            "kind" => {
                let value = w.value()?;
                let value: Option<Cow<'_, str>> = serde_json::from_str(w.text(value)?).ok()?;
                kind = value.is_some_and(|k| !k.is_empty());
            }
            _ => {
                let value = w.value()?;
                serde_json::from_str::<IgnoredAny>(w.text(value)?).ok()?;
            }
        }
        match w.next_token()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    // Nothing but white space after the object.
    if w.next_token().is_some() || w.total > MAX_SNAPSHOT_BYTES {
        return None;
    }
    (items && kind).then_some(())
}

/// Items scanned into one [`Batch`].
const BATCH_ITEMS: usize = 256;

/// Items of the `items` array, copied out of the window: item `i` is `text[ends[i - 1]..ends[i]]`.
#[derive(Default)]
struct Batch {
    text: String,
    ends: Vec<usize>,
}

impl Batch {
    /// Each item decoded (`None` for a kind that is not read); `None` at the first item that does not
    /// decode or is incomplete. Pods are decoded narrowly, whole only the first of each template in
    /// `met` (this thread's: it reads its batches in the file's order).
    fn decode(&self, met: &mut TemplatesMet) -> Option<Vec<Option<ClusterObject>>> {
        let mut start = 0;
        let mut objects = Vec::with_capacity(self.ends.len());
        for &end in &self.ends {
            let object =
                cluster_objects::decode_json_listed(self.text.get(start..end)?, &mut |pod| {
                    met.first(pod)
                })
                .ok()?;
            if object.as_ref().is_some_and(|o| incomplete(o).is_some()) {
                return None;
            }
            objects.push(object);
            start = end;
        }
        Some(objects)
    }
}

/// The `items` array: each item decoded from its own slice and handed on, in the file's order.
///
/// Decoding is most of a reading's work, so every other [`Batch`] is decoded on a second thread while
/// this one scans and decodes the next: at the envelope (150,000 pods) that lets the reading use both
/// cores instead of one beside the audit.
fn items_of<R: Read>(
    w: &mut Window<R>,
    batch_items: usize,
    tally: &mut Tally,
    sink: &mut dyn FnMut(ClusterObject),
) -> Option<()> {
    if w.next_token()? != b'[' {
        return None;
    }
    if w.peek_token()? == b']' {
        w.pos += 1;
        return Some(());
    }
    let mut hand_on = |objects: Vec<Option<ClusterObject>>| {
        for object in objects {
            match object {
                None => tally.skipped += 1,
                Some(object) => {
                    tally.count(&object);
                    sink(object);
                }
            }
        }
    };
    std::thread::scope(|scope| {
        let (to_helper, batches) = std::sync::mpsc::sync_channel::<Batch>(1);
        let (decoded, from_helper) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            let mut met = TemplatesMet::default();
            for batch in batches {
                if decoded.send(batch.decode(&mut met)).is_err() {
                    break;
                }
            }
        });
        // Whether the helper holds a batch, which comes before the one this thread decodes.
        let mut lent = false;
        let mut met = TemplatesMet::default();
        // Room for a batch's text, from the last one's: a batch grown from empty copies its text again
        // at each doubling (half a megabyte a batch at the envelope).
        let mut room = 0;
        loop {
            let (batch, last) = scan_batch(w, batch_items, room)?;
            room = batch.text.len() + batch.text.len() / 4;
            if !lent && !last {
                to_helper.send(batch).ok()?;
                lent = true;
                continue;
            }
            let mine = batch.decode(&mut met);
            if lent {
                hand_on(from_helper.recv().ok()??);
                lent = false;
            }
            hand_on(mine?);
            if last {
                return Some(());
            }
        }
    })
}

/// Up to `items` items of the `items` array, the first one's `[` or `,` already consumed, in a text of
/// `room` bytes to start with; and whether the array's `]` ended it.
fn scan_batch<R: Read>(w: &mut Window<R>, items: usize, room: usize) -> Option<(Batch, bool)> {
    let mut batch = Batch {
        text: String::with_capacity(room),
        ends: Vec::with_capacity(items),
    };
    loop {
        let raw = w.value()?;
        batch.text.push_str(w.text(raw)?);
        batch.ends.push(batch.text.len());
        match w.next_token()? {
            b',' if batch.ends.len() < items => {}
            b',' => return Some((batch, false)),
            b']' => return Some((batch, true)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::objects;

    /// What the whole-text reader makes of `text`, as comparable JSON.
    fn whole(text: &str) -> Result<(Tally, Vec<String>), objects::SnapshotError> {
        let mut got = Vec::new();
        let tally = objects::read("f.json", text, &mut |o| got.push(format!("{o:?}")))?;
        Ok((tally, got))
    }

    /// What a reading made of a text: its tally and its objects, as comparable text.
    type Reading = (Tally, Vec<String>);

    /// What streaming makes of `text`, `block` bytes and `batch` items at a time, each pod made whole
    /// (it is read narrowly); and how many pods were read narrowly, and of those, with their spec whole.
    fn streamed_pods(text: &[u8], block: usize, batch: usize) -> Option<(Reading, (usize, usize))> {
        let mut got = Vec::new();
        let (mut narrow, mut whole) = (0, 0);
        let read = read_from(text, block, batch, &mut |o| {
            let o = match o {
                ClusterObject::ListedPod(pod) => {
                    narrow += 1;
                    whole += usize::from(pod.whole_spec.is_some());
                    ClusterObject::Pod(Box::new(pod.into_pod().expect("its spec decodes")))
                }
                o => o,
            };
            got.push(format!("{o:?}"));
        });
        match read {
            Streamed::Read(tally) => Some(((tally, got), (narrow, whole))),
            Streamed::Again => None,
        }
    }

    /// What streaming makes of `text` (see [`streamed_pods`]).
    fn streamed(text: &[u8], block: usize, batch: usize) -> Option<(Tally, Vec<String>)> {
        streamed_pods(text, block, batch).map(|(got, _)| got)
    }

    fn cluster() -> String {
        let (nodes, pods, rcs) = winplace_synthetic::synthetic_cluster(12, 60, 3);
        let rcs: Vec<_> = rcs.into_iter().map(|r| r.object).collect();
        let mut items: Vec<serde_json::Value> = Vec::new();
        for n in nodes {
            let mut v = serde_json::to_value(n).unwrap();
            v["kind"] = "Node".into();
            v["apiVersion"] = "v1".into();
            items.push(v);
        }
        for p in pods {
            let mut v = serde_json::to_value(p).unwrap();
            v["kind"] = "Pod".into();
            v["apiVersion"] = "v1".into();
            items.push(v);
        }
        for r in rcs {
            let mut v = serde_json::to_value(r).unwrap();
            v["kind"] = "RuntimeClass".into();
            v["apiVersion"] = "node.k8s.io/v1".into();
            items.push(v);
        }
        // A kind the audit skips, with brackets, quotes and escapes in its strings.
        items.push(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "odd"}, "data": {"a": "}]\"\\[{", "b": "\u{e9}t\u{e9} \u{1} \\"}}));
        serde_json::to_string_pretty(&serde_json::json!({
            "apiVersion": "v1", "items": items, "kind": "List",
            "metadata": {"resourceVersion": "", "n": [1, -2.5e3, true, null, "x"]}}))
        .unwrap()
    }

    #[test]
    fn a_list_streams_to_what_the_whole_text_reads_at_any_block_size() {
        let pretty = cluster();
        let compact =
            serde_json::to_string(&serde_json::from_str::<serde_json::Value>(&pretty).unwrap())
                .unwrap();
        // `kind` before `items`, and a number as the last member.
        let reordered = format!(
            "{{\"kind\":\"List\",\"items\":{},\"z\":12}}\n\n",
            serde_json::to_string(
                &serde_json::from_str::<serde_json::Value>(&pretty).unwrap()["items"]
            )
            .unwrap()
        );
        for text in [&pretty, &compact, &reordered] {
            let want = whole(text).expect("a valid list");
            assert!(
                want.0.nodes == 12 && want.0.pods == 60 && want.0.skipped == 1,
                "{:?}",
                want.0
            );
            // Batches of one item, a few, and all of them: the order and the tally stay the file's.
            for (block, batch) in [(1, 3), (7, 1), (64, 2), (4096, 7), (BLOCK, BATCH_ITEMS)] {
                let (got, (narrow, whole)) =
                    streamed_pods(text.as_bytes(), block, batch).expect("streams");
                assert_eq!(got, want, "block {block}, batch {batch}");
                // Pods are read narrowly, whole only the first of each template a thread meets.
                assert_eq!(narrow, 60, "block {block}, batch {batch}");
                assert!(whole > 0 && whole < narrow, "{whole} of {narrow} whole");
            }
        }
        // An empty list streams too.
        let empty = r#"{"apiVersion": "v1", "items": [], "kind": "List"}"#;
        assert_eq!(
            streamed(empty.as_bytes(), 3, 2),
            Some(whole(empty).unwrap())
        );
    }

    #[test]
    fn anything_wrong_is_left_to_the_whole_text_reader() {
        let good = cluster();
        let cut = &good[..good.len() / 2];
        let no_kind = good.replace("\"kind\": \"List\"", "\"other\": 1");
        let bad_item = good.replacen("\"nodeName\": \"", "\"nodeName\": [\"", 1);
        let trailing = format!("{good} x");
        let not_utf8 = {
            let mut b = good.clone().into_bytes();
            let name = good.find("odd").unwrap();
            b[name] = 0xff;
            b
        };
        for (what, text) in [
            ("cut short", cut.as_bytes()),
            ("without kind", no_kind.as_bytes()),
            ("an item that does not decode", bad_item.as_bytes()),
            ("trailing text", trailing.as_bytes()),
            ("not UTF-8", &not_utf8[..]),
            (
                "one object",
                br#"{"kind": "Node", "metadata": {"name": "n"}}"#,
            ),
            ("empty object", b"{}"),
            ("YAML", b"kind: List\nitems: []\n"),
            ("nothing", b""),
        ] {
            // Wherever the fault is, in the helper's batch or this thread's.
            for (block, batch) in [(5, 1), (5, 2), (BLOCK, 5), (BLOCK, BATCH_ITEMS)] {
                assert!(
                    streamed(text, block, batch).is_none(),
                    "{what}, block {block}, batch {batch}"
                );
            }
            if let Ok(text) = std::str::from_utf8(text)
                && what != "one object"
                && what != "YAML"
            {
                assert!(
                    whole(text).is_err(),
                    "{what}: the whole-text reader says what is wrong"
                );
            }
        }
    }
}
