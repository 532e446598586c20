//! Names valid for LLM APIs (`^[a-zA-Z0-9_-]{1,64}$`): sanitising, truncation with a stable hash
//! suffix, and collision handling ([`NameAllocator`]).

use std::hash::BuildHasher;

use foldhash::fast::RandomState;
use hashbrown::HashTable;

use crate::SharedText;

/// The shortest `max_len` the allocator accepts: room for a few characters and a hash suffix.
pub const MIN_NAME_LEN: usize = 16;
/// The longest name LLM APIs accept.
pub const MAX_NAME_LEN: usize = 64;

/// The length of a hash suffix: `_` and 8 hex digits.
const SUFFIX_LEN: usize = 9;
/// How many salted hashes the allocator tries before it falls back to a counter.
const SALT_TRIES: u32 = 64;

/// The 32-bit FNV-1a hash of `bytes`: tiny, and the same on every run and platform.
pub fn fnv1a_32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// Whether `c` may appear in an LLM tool name.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `name` matches `^[a-zA-Z0-9_-]{1,max_len}$`.
pub fn is_valid_name(name: &str, max_len: usize) -> bool {
    !name.is_empty() && name.len() <= max_len && name.chars().all(is_name_char)
}

/// The bytes of `[a-zA-Z0-9_-]`, one table lookup each: a registry checks every name it lists.
static NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
        b += 1;
    }
    table
};

fn is_name_byte(b: u8) -> bool {
    NAME_BYTES[usize::from(b)]
}

/// `name` with every character outside `[a-zA-Z0-9_-]` replaced by `_` (one `_` per character).
pub fn sanitize(name: &str) -> String {
    // Most names are valid already: copied whole, not rebuilt a character at a time.
    if name.bytes().all(is_name_byte) {
        return name.to_owned();
    }
    name.chars().map(|c| if is_name_char(c) { c } else { '_' }).collect()
}

/// Hands out unique valid names, in order: the first to ask for a name gets it unchanged when it
/// is valid and free; later ones get a hash suffix.
#[derive(Debug)]
pub struct NameAllocator {
    max_len: usize,
    letter_first: bool,
    /// Hashed by foldhash: seeded per process like std's hasher, several times faster on short
    /// names. Each name is hashed once to see whether it is free and to take it.
    taken: HashTable<SharedText>,
    hasher: RandomState,
}

impl NameAllocator {
    /// An allocator of names at most `max_len` long (clamped to
    /// [`MIN_NAME_LEN`]..=[`MAX_NAME_LEN`]).
    pub fn new(max_len: usize) -> Self {
        Self::with_capacity(max_len, 0)
    }

    /// An allocator as [`NameAllocator::new`] makes, with room for `names` names before its
    /// table grows (a registry knows how many tools it names).
    pub fn with_capacity(max_len: usize, names: usize) -> Self {
        Self {
            max_len: max_len.clamp(MIN_NAME_LEN, MAX_NAME_LEN),
            letter_first: false,
            taken: HashTable::with_capacity(names),
            hasher: RandomState::default(),
        }
    }

    /// Names that start with a letter or `_` (a name starting with a digit or `-` gets a `_`
    /// in front), as Gemini's function names must: the registry's names suit every LLM API.
    pub fn letter_first(mut self) -> Self {
        self.letter_first = true;
        self
    }

    /// Marks `name` as taken (a reserved name such as `tool_search`).
    pub fn reserve(&mut self, name: &str) {
        let hash = self.hasher.hash_one(name);
        if !self.is_taken_hashed(hash, name) {
            self.take_hashed(hash, name.into());
        }
    }

    /// Whether `name` is taken.
    pub fn is_taken(&self, name: &str) -> bool {
        self.is_taken_hashed(self.hasher.hash_one(name), name)
    }

    fn is_taken_hashed(&self, hash: u64, name: &str) -> bool {
        self.taken.find(hash, |taken| taken.as_str() == name).is_some()
    }

    /// A unique valid name for `original` (the qualified name, before sanitising):
    ///
    /// - characters outside `[a-zA-Z0-9_-]` become `_` (an empty name becomes `tool`); with
    ///   [`letter_first`](Self::letter_first), a leading digit or `-` gets a `_` in front;
    /// - a name longer than the limit keeps its head and gets `_` + 8 hex digits of the FNV-1a
    ///   hash of `original`;
    /// - a name that is already taken gets the same suffix; should that be taken too, the hash
    ///   is salted until a free name is found.
    ///
    /// The result depends only on `original` and the names taken before, so it is the same on
    /// every run for the same registration order.
    pub fn allocate(&mut self, original: &str) -> String {
        self.allocate_shared(original).into_string()
    }

    /// [`allocate_shared`](Self::allocate_shared) for an `original` the caller owns: a name
    /// that is valid and free as it is becomes the allocated name without a copy (a registry
    /// builds each qualified name only to name its tool).
    pub fn allocate_owned(&mut self, original: String) -> SharedText {
        match self.take_unchanged(original) {
            Ok(name) => name,
            Err(original) => self.allocate_shared(&original),
        }
    }

    /// `original` itself, taken, when it is valid and free (the name
    /// [`allocate_owned`](Self::allocate_owned) would hand out unchanged); else `original` back,
    /// and nothing is taken.
    ///
    /// A name handed out unchanged tells the caller more: no earlier call asked for a name for
    /// the same `original` (that call would have taken it, or found it taken, and names are never
    /// given back).
    pub fn take_unchanged(&mut self, original: String) -> Result<SharedText, String> {
        let hash = self.hash(&original);
        self.take_unchanged_hashed(original, hash)
    }

    /// [`take_unchanged`](Self::take_unchanged) for an `original` whose [`hash`](Self::hash)
    /// the caller has: a registry hashes each name for tables of its own with this allocator's
    /// hasher, and a name is hashed once.
    pub(crate) fn take_unchanged_hashed(&mut self, original: String, hash: u64) -> Result<SharedText, String> {
        if !self.keeps(&original) || self.is_taken_hashed(hash, &original) {
            return Err(original);
        }
        Ok(self.take_hashed(hash, original.into()))
    }

    /// The hash of `name` by this allocator's hasher (seeded at random when the allocator is
    /// made, as std's are).
    pub(crate) fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    /// The hasher of this allocator, for tables that should hash names as it does.
    pub(crate) fn hasher(&self) -> &RandomState {
        &self.hasher
    }

    /// Whether `name` is valid as it is: the allocator hands it out unchanged when it is free.
    pub(crate) fn keeps(&self, name: &str) -> bool {
        !name.is_empty()
            && name.len() <= self.max_len
            && name.bytes().all(is_name_byte)
            && !(self.letter_first && name.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
    }

    /// [`allocate`](Self::allocate), as the allocator keeps the name: no copy of it (the
    /// registry's name table and its listings share this buffer).
    pub fn allocate_shared(&mut self, original: &str) -> SharedText {
        let mut base = sanitize(original);
        if base.is_empty() {
            base.push_str("tool");
        }
        if self.letter_first && base.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            base.insert(0, '_');
        }
        if base.len() <= self.max_len {
            let hash = self.hasher.hash_one(base.as_str());
            if !self.is_taken_hashed(hash, &base) {
                return self.take_hashed(hash, base.into());
            }
        }
        let head = &base[..base.len().min(self.max_len - SUFFIX_LEN)];
        for salt in 0..SALT_TRIES {
            let hash = if salt == 0 {
                fnv1a_32(original.as_bytes())
            } else {
                fnv1a_32(format!("{original}\u{0}{salt}").as_bytes())
            };
            let candidate = format!("{head}_{hash:08x}");
            if let Some(name) = self.take_if_free(candidate) {
                return name;
            }
        }
        // Only reachable after 64 hash collisions in a row: count upwards from the hash. The
        // set of taken names is finite, so this ends.
        let mut counter = u64::from(fnv1a_32(original.as_bytes()));
        loop {
            counter = counter.wrapping_add(1);
            let candidate = format!("{head}_{:08x}", counter & 0xffff_ffff);
            if let Some(name) = self.take_if_free(candidate) {
                return name;
            }
        }
    }

    /// `name`, taken, when it is free.
    fn take_if_free(&mut self, name: String) -> Option<SharedText> {
        let hash = self.hasher.hash_one(name.as_str());
        (!self.is_taken_hashed(hash, &name)).then(|| self.take_hashed(hash, name.into()))
    }

    /// Room for `names` more names before the table of taken names grows.
    pub(crate) fn reserve_names(&mut self, names: usize) {
        let hasher = &self.hasher;
        self.taken.reserve(names, |taken| hasher.hash_one(taken.as_str()));
    }

    /// Marks the free `name`, whose hash is `hash` (by [`hash`](Self::hash)), as taken and hands
    /// it out, not looking whether it is taken: the caller knows it is free (a registry hands its
    /// allocator the names it gave out without it).
    pub(crate) fn take_hashed(&mut self, hash: u64, name: SharedText) -> SharedText {
        let hasher = &self.hasher;
        self.taken.insert_unique(hash, name.clone(), |taken| hasher.hash_one(taken.as_str()));
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_values() {
        assert_eq!(fnv1a_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a_32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a_32(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn the_byte_table_matches_the_character_rule() {
        for b in 0..=u8::MAX {
            let expected = b.is_ascii() && is_name_char(char::from(b));
            assert_eq!(is_name_byte(b), expected, "byte {b:#04x}");
        }
        assert_eq!(sanitize("a-b_C9"), "a-b_C9");
        assert_eq!(sanitize("a\u{e9}b"), "a_b", "a multi-byte character is one `_`");
    }

    #[test]
    fn valid_free_names_are_kept() {
        let mut names = NameAllocator::new(64);
        assert_eq!(names.allocate("get_weather"), "get_weather");
        assert_eq!(names.allocate("server__read-file"), "server__read-file");
    }

    #[test]
    fn invalid_characters_become_underscores() {
        let mut names = NameAllocator::new(64);
        assert_eq!(names.allocate("my.server__read file/é"), "my_server__read_file__");
        assert_eq!(names.allocate(""), "tool");
    }

    #[test]
    fn long_names_are_truncated_with_a_stable_hash() {
        let original = "x".repeat(100);
        let name = NameAllocator::new(64).allocate(&original);
        assert_eq!(name.len(), 64);
        assert_eq!(name, format!("{}_{:08x}", "x".repeat(55), fnv1a_32(original.as_bytes())));
        assert_eq!(NameAllocator::new(64).allocate(&original), name, "same input, same name");
    }

    #[test]
    fn collisions_get_a_hash_suffix() {
        let mut names = NameAllocator::new(64);
        assert_eq!(names.allocate("a.b"), "a_b");
        let second = names.allocate("a b");
        assert_eq!(second, format!("a_b_{:08x}", fnv1a_32(b"a b")));
        let third = names.allocate("a b");
        assert_ne!(third, second);
        assert!(is_valid_name(&third, 64));
    }

    #[test]
    fn letter_first_names_never_start_with_a_digit_or_dash() {
        let mut names = NameAllocator::new(64).letter_first();
        assert_eq!(names.allocate("1password__get"), "_1password__get");
        assert_eq!(names.allocate("-x"), "_-x");
        assert_eq!(names.allocate("ok"), "ok");
        let long = names.allocate(&format!("9{}", "x".repeat(80)));
        assert!(long.starts_with("_9") && long.len() == 64, "{long}");
        assert_eq!(NameAllocator::new(64).allocate("1password"), "1password", "off by default");
    }

    #[test]
    fn an_owned_name_is_allocated_as_a_borrowed_one_is() {
        let long = format!("9{}", "x".repeat(80));
        let originals = ["get_weather", "get_weather", "a.b", "a_b", "", "1password__get", "-x", long.as_str()];
        let mut borrowed = NameAllocator::new(64).letter_first();
        let mut owned = NameAllocator::new(64).letter_first();
        for original in originals {
            let expected = borrowed.allocate_shared(original);
            assert_eq!(owned.allocate_owned(original.to_owned()), expected, "for {original:?}");
        }
        // A valid free name is the caller's buffer itself.
        let name = String::from("kept_as_is");
        let address = name.as_ptr();
        assert_eq!(owned.allocate_owned(name).as_str().as_ptr(), address);
    }

    #[test]
    fn a_name_is_taken_unchanged_only_when_it_is_valid_and_free() {
        let mut names = NameAllocator::new(64).letter_first();
        let kept = names.take_unchanged("a__b".to_owned()).unwrap();
        assert_eq!(kept, "a__b");
        assert!(names.is_taken("a__b"));
        // Taken already, invalid, too long, starting with a digit: given back, nothing taken.
        assert_eq!(names.take_unchanged("a__b".to_owned()).unwrap_err(), "a__b");
        assert_eq!(names.take_unchanged("a.b".to_owned()).unwrap_err(), "a.b");
        assert!(!names.is_taken("a_b"));
        let long = "x".repeat(65);
        assert_eq!(names.take_unchanged(long.clone()).unwrap_err(), long);
        assert_eq!(names.take_unchanged("9lives".to_owned()).unwrap_err(), "9lives");
        assert_eq!(names.take_unchanged(String::new()).unwrap_err(), "");
        // The name given back gets what `allocate` gives it.
        assert_eq!(names.allocate_owned("a.b".to_owned()), "a_b");
        assert_eq!(names.allocate_owned("a__b".to_owned()), format!("a__b_{:08x}", fnv1a_32(b"a__b")));
    }

    #[test]
    fn max_len_is_clamped() {
        let mut names = NameAllocator::new(3);
        let name = names.allocate("abcdefghijklmnopqrstuvwxyz");
        assert_eq!(name.len(), MIN_NAME_LEN);
        assert!(is_valid_name(&name, MIN_NAME_LEN));
    }
}
