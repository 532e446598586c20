//! The checklist of ARCHITECTURE.md's "How to add a protocol revision", walked for every revision
//! this crate knows: each place the checklist names agrees on the list of revisions.
//!
//! 1. `ProtocolVersion` (`src/revision.rs`): a variant in `KNOWN`, oldest first, that parses from
//!    and prints as its wire string, with its era; `LATEST_LEGACY` and `LATEST_MODERN` are the
//!    newest of each era.
//! 2. The schema tests' [`Rev`] list names the same revisions in the same order, with the same era.
//! 3. The official schema is at `<workspace>/../shared/mcp-spec/<revision>/schema.json`, and it
//!    is the era's: `initialize` in the legacy era, `server/discover` in the modern one.
//!
//! The other steps (types, the schema table, the demo server, the client's offer) have tests of
//! their own: `schema_conformance`, and `mcp-cli`'s `the_demo_server_speaks_every_known_revision`.

use mcp_protocol::{Era, ProtocolVersion};

use super::Rev;
use super::spec::{Spec, dir};

#[test]
fn the_revision_table_round_trips_and_names_the_latest_of_each_era() {
    for (i, version) in ProtocolVersion::KNOWN.iter().enumerate() {
        assert!(version.is_known(), "{version}");
        assert_eq!(&ProtocolVersion::parse(version.as_str()), version, "{version} parses from its wire string");
        let json = serde_json::to_value(version).unwrap();
        assert_eq!(serde_json::from_value::<ProtocolVersion>(json).unwrap(), *version, "{version} round-trips");
        if let Some(older) = i.checked_sub(1).map(|j| &ProtocolVersion::KNOWN[j]) {
            assert!(older < version, "KNOWN is oldest first: {older} before {version}");
            assert!(older.as_str() < version.as_str(), "wire strings are dates: {older} before {version}");
        }
    }
    let newest = |era| ProtocolVersion::KNOWN.iter().rfind(|v| v.era() == Some(era)).cloned();
    assert_eq!(newest(Era::Legacy), Some(ProtocolVersion::LATEST_LEGACY));
    assert_eq!(newest(Era::Modern), Some(ProtocolVersion::LATEST_MODERN));
}

#[test]
fn the_schema_tests_cover_exactly_the_known_revisions() {
    let ours: Vec<&str> = ProtocolVersion::KNOWN.iter().map(ProtocolVersion::as_str).collect();
    let tested: Vec<&str> = Rev::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(tested, ours, "tests/schema/mod.rs `Rev` must list every revision of `ProtocolVersion::KNOWN`");
    for rev in Rev::ALL {
        let era = ProtocolVersion::parse(rev.as_str()).era();
        assert_eq!(rev.is_modern(), era == Some(Era::Modern), "{rev}: the schema tests and the table agree on the era");
    }
}

#[test]
fn every_known_revision_has_its_official_schema() {
    let dir = dir();
    for version in &ProtocolVersion::KNOWN {
        let path = dir.join(version.as_str()).join("schema.json");
        assert!(path.is_file(), "{} is missing: copy the revision's official schema.json there", path.display());
        let rev = Rev::ALL.into_iter().find(|r| r.as_str() == version.as_str()).expect("a tested revision");
        let spec = Spec::load(rev);
        match version.era() {
            Some(Era::Legacy) => {
                assert!(spec.has("InitializeRequest") && !spec.has("DiscoverRequest"), "{version}: a legacy schema");
            }
            Some(Era::Modern) => {
                assert!(spec.has("DiscoverRequest") && !spec.has("InitializeRequest"), "{version}: a modern schema");
            }
            None => unreachable!("a known revision has an era"),
        }
    }
}
