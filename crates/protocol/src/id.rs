//! Identities that travel as plain strings (session ids, task ids): a type each, so
//! one cannot be passed where the other is meant, while the wire, logs and files keep
//! the bare string.

/// Declares `$name` as a string identity: serialises and deserialises as the plain
/// string (and its JSON schema is a string's), reads as `&str` (`Deref`, `Borrow<str>` for map lookups by `&str`), compares
/// with a `str`, prints as itself.
macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(std::sync::Arc<str>);

        /// As the string's: `"1a2b3c4d"`, in messages that quote it as in logs.
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map(Self::from)
            }
        }

        impl $name {
            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(std::sync::Arc::from(id))
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(std::sync::Arc::from(id))
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                String::json_schema(generator)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                &*self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                &*self.0 == *other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == &*other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == &*other.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

string_id! {
    /// An agent session's id: 8 hex digits, shown in `/status`, logs and terminal names.
    SessionId
}

impl SessionId {
    /// A new random id.
    pub fn new_random() -> Self {
        Self::from(&uuid::Uuid::new_v4().simple().to_string()[..8])
    }

    /// True for the shape [`SessionId::new_random`] makes (a checkpoint may hold
    /// anything).
    pub fn is_well_formed(&self) -> bool {
        self.0.len() == 8 && self.0.bytes().all(|b| b.is_ascii_hexdigit())
    }
}

string_id! {
    /// A task's id: 12 hex digits, shown to agents and kept in the task file.
    TaskId
}

impl TaskId {
    /// A new random id.
    pub fn new_random() -> Self {
        Self::from(&uuid::Uuid::new_v4().simple().to_string()[..12])
    }
}
