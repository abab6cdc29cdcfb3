/// The key of a fact: what a memory is about (`entity`, e.g. `user`) and which property of it
/// (`attribute`, e.g. `preferred_language`). Memories with one key are versions of one fact:
/// the one that happened last is active and supersedes the others. A memory without both has
/// no key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FactKey {
    pub entity: String,
    pub attribute: String,
}

impl FactKey {
    /// The key of a memory that names both, else none.
    pub fn of(entity: Option<&str>, attribute: Option<&str>) -> Option<Self> {
        match (entity, attribute) {
            (Some(entity), Some(attribute)) => Some(Self {
                entity: entity.to_owned(),
                attribute: attribute.to_owned(),
            }),
            _ => None,
        }
    }

    /// Whether a near-duplicate with key `new` may be merged into `existing`: not when it is a
    /// different keyed fact ("user.city = Paris" must not swallow "user.hometown = Paris",
    /// however similar the sentences are).
    pub fn may_merge(new: Option<&FactKey>, existing: &super::Memory) -> bool {
        match new {
            Some(key) => {
                existing.entity.as_deref() == Some(key.entity.as_str())
                    && existing.attribute.as_deref() == Some(key.attribute.as_str())
            }
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FactKey;

    #[test]
    fn a_key_needs_both_parts() {
        assert!(FactKey::of(Some("user"), None).is_none());
        assert!(FactKey::of(None, Some("city")).is_none());
        let key = FactKey::of(Some("user"), Some("city")).unwrap();
        assert_eq!(key.entity, "user");
        assert_eq!(key.attribute, "city");
    }
}
