use super::Scopes;

/// Who is calling: a name (recorded with what they do) and what they may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub name: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Everything: every namespace, the jobs, the archive, tokens, metrics.
    Operator,
    /// What a token grants.
    Agent(Grants),
}

/// A token's namespace scopes: `read` (search, get), `write` (write, forget), `review` (the
/// distilled candidates of those namespaces).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Grants {
    #[serde(default)]
    pub read: Scopes,
    #[serde(default)]
    pub write: Scopes,
    #[serde(default)]
    pub review: Scopes,
}

impl Principal {
    pub fn operator(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            role: Role::Operator,
        }
    }

    pub fn agent(name: impl Into<String>, grants: Grants) -> Self {
        Self {
            name: name.into(),
            role: Role::Agent(grants),
        }
    }

    pub fn is_operator(&self) -> bool {
        matches!(self.role, Role::Operator)
    }

    pub fn may_read(&self, namespace: &str) -> bool {
        self.grants().is_none_or(|g| g.read.allows(namespace))
    }

    pub fn may_write(&self, namespace: &str) -> bool {
        self.grants().is_none_or(|g| g.write.allows(namespace))
    }

    pub fn may_review(&self, namespace: &str) -> bool {
        self.grants().is_none_or(|g| g.review.allows(namespace))
    }

    /// An agent's grants; `None` for the operator, who may do everything.
    pub fn grants(&self) -> Option<&Grants> {
        match &self.role {
            Role::Operator => None,
            Role::Agent(grants) => Some(grants),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_may_do_what_its_scopes_say_and_the_operator_everything() {
        let grants = Grants {
            read: Scopes::parse_list("global,team/*,private/a").unwrap(),
            write: Scopes::parse_list("private/a").unwrap(),
            review: Scopes::default(),
        };
        let agent = Principal::agent("a", grants);
        assert!(agent.may_read("team/x") && agent.may_read("global"));
        assert!(!agent.may_read("private/b"));
        assert!(agent.may_write("private/a") && !agent.may_write("global"));
        assert!(!agent.may_review("private/a"));
        let operator = Principal::operator("ops");
        assert!(
            operator.may_read("private/b") && operator.may_write("x") && operator.may_review("y")
        );
    }
}
