//! Text that several parts of a result hold at once: [`SharedText`].

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An immutable string whose clones share one buffer.
///
/// A result's [`content`](crate::ToolExecutionResult::content) and its text
/// [item](crate::ContentItem::Text) are often the same text: both hold a `SharedText`, so a tool
/// that returns 8 MiB of text costs 8 MiB, not 16. Made from a `String` it takes that string's
/// buffer as it is (no copy); [`into_string`](SharedText::into_string) gives the buffer back when
/// no other clone holds it, and [`make_mut`](SharedText::make_mut) edits it in place on the same
/// terms (each copies only when the text is shared).
///
/// It reads as a `str` (`Deref`, `AsRef<str>`, `Borrow<str>`), compares, orders and hashes as its
/// text, and serialises as a JSON string. Its `Debug` is the text's.
#[derive(Clone)]
pub struct SharedText(Arc<String>);

/// The empty text every [`SharedText::default`] shares: a spec's provider fields start empty,
/// and an empty value should not cost an allocation each.
static EMPTY: std::sync::LazyLock<SharedText> = std::sync::LazyLock::new(|| SharedText(Arc::default()));

impl Default for SharedText {
    fn default() -> Self {
        EMPTY.clone()
    }
}

impl SharedText {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text as a `String`: the buffer itself when no other clone holds it, else a copy.
    pub fn into_string(self) -> String {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| String::clone(&shared))
    }

    /// The text to edit: in place when no other clone holds it, else in a copy that this value
    /// holds from now on (the other clones keep the old text).
    pub fn make_mut(&mut self) -> &mut String {
        Arc::make_mut(&mut self.0)
    }

    /// Whether `self` and `other` hold the same buffer (not only equal text).
    pub fn shares_buffer_with(&self, other: &SharedText) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedText {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        Self(Arc::new(text))
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        Self(Arc::new(text.to_owned()))
    }
}

impl From<&String> for SharedText {
    fn from(text: &String) -> Self {
        Self::from(text.as_str())
    }
}

impl From<Cow<'_, str>> for SharedText {
    fn from(text: Cow<'_, str>) -> Self {
        Self::from(text.into_owned())
    }
}

impl From<Box<str>> for SharedText {
    fn from(text: Box<str>) -> Self {
        Self::from(String::from(text))
    }
}

impl From<SharedText> for String {
    fn from(text: SharedText) -> Self {
        text.into_string()
    }
}

/// A copy: what takes `impl Into<String>` takes `&tool.llm_name` as it took a `&String`.
impl From<&SharedText> for String {
    fn from(text: &SharedText) -> Self {
        text.as_str().to_owned()
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &Self) -> bool {
        // Clones of one text (a provider's name in each of its specs) need no look at the text.
        self.shares_buffer_with(other) || self.as_str() == other.as_str()
    }
}

impl Eq for SharedText {}

impl PartialOrd for SharedText {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedText {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for SharedText {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for SharedText {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<SharedText> for str {
    fn eq(&self, other: &SharedText) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<SharedText> for &str {
    fn eq(&self, other: &SharedText) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<SharedText> for String {
    fn eq(&self, other: &SharedText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for SharedText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_values_share_one_buffer_and_stay_independent() {
        let (mut a, b) = (SharedText::default(), SharedText::default());
        assert!(a.shares_buffer_with(&b), "no allocation per empty value");
        assert_eq!(a, "");
        a.make_mut().push_str("edited");
        assert_eq!((a.as_str(), b.as_str()), ("edited", ""), "editing one leaves the others empty");
        assert!(SharedText::default().into_string().is_empty());
    }

    #[test]
    fn a_string_is_taken_and_given_back_without_a_copy_when_not_shared() {
        let text = "x".repeat(4096);
        let at = text.as_ptr();
        let shared = SharedText::from(text);
        assert_eq!(shared.as_ptr(), at, "made from the string's own buffer");
        let clone = shared.clone();
        assert!(clone.shares_buffer_with(&shared));
        assert_eq!(clone.as_ptr(), at);
        drop(clone);
        let back = shared.into_string();
        assert_eq!(back.as_ptr(), at, "the buffer comes back once no clone holds it");
    }

    #[test]
    fn a_shared_text_is_copied_only_when_taken_or_edited_while_shared() {
        let shared = SharedText::from("abc");
        let mut edited = shared.clone();
        edited.make_mut().push('d');
        assert_eq!((shared.as_str(), edited.as_str()), ("abc", "abcd"), "the other clone keeps the old text");
        assert!(!edited.shares_buffer_with(&shared));
        let kept = shared.clone();
        let owned = shared.into_string();
        assert_eq!((owned.as_str(), kept.as_str()), ("abc", "abc"));
        assert_ne!(owned.as_ptr(), kept.as_ptr(), "taken while shared: a copy");
    }

    #[test]
    fn it_compares_hashes_and_serialises_as_its_text() {
        let a = SharedText::from("hello");
        assert_eq!(a, "hello");
        assert_eq!("hello", a);
        assert_eq!(String::from("hello"), a);
        assert_ne!(a, *"hell");
        // Between two shared texts: clones of one, and equal texts in buffers of their own.
        assert_eq!(a, a.clone());
        assert_eq!(a, SharedText::from("hello"));
        assert_ne!(a, SharedText::from("hellO"));
        let (x, y) = (SharedText::from("a"), SharedText::from("b"));
        assert_eq!(x.cmp(&y), std::cmp::Ordering::Less);
        let set: std::collections::HashSet<SharedText> = [a.clone()].into();
        assert!(set.contains("hello"));
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"hello\"");
        assert_eq!(serde_json::from_str::<SharedText>("\"hi\\n\"").unwrap(), "hi\n");
        assert_eq!(format!("{a:?} {a}"), "\"hello\" hello");
        assert!(serde_json::from_str::<SharedText>("1").is_err());
    }
}
