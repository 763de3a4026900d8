//! The MCP requests the bridge answers, by wire name, and which revision each belongs
//! to: the Session dispatches on them, `/mcp` and the relay refuse what a revision does
//! not have before a session is involved.

/// Declares an enum of wire names: each variant and its name, every one in `ALL` (a
/// variant cannot be left out of it), `name` and `parse`.
macro_rules! wire_names {
    ($(#[$meta:meta])* pub enum $ty:ident { $( $variant:ident = $wire:literal, )* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $ty {
            $( #[doc = concat!("`", $wire, "`")] $variant, )*
        }

        impl $ty {
            /// Every one, in declaration order.
            pub const ALL: &'static [$ty] = &[ $( $ty::$variant, )* ];

            /// How many there are: [`Self::index`] is below it.
            pub const COUNT: usize = Self::ALL.len();

            /// Its place among them (for tables indexed by it).
            pub fn index(self) -> usize {
                self as usize
            }

            /// The wire name (a `'static` label for metrics).
            pub const fn name(self) -> &'static str {
                match self {
                    $( $ty::$variant => $wire, )*
                }
            }

            /// The one whose wire name is `name`.
            pub fn parse(name: &str) -> Option<Self> {
                match name {
                    $( $wire => Some($ty::$variant), )*
                    _ => None,
                }
            }
        }
    };
}

/// The macro, for the editor protocol's notifications too.
pub(crate) use wire_names;

wire_names! {
    /// The MCP requests the bridge answers (both revisions).
    pub enum Method {
        Initialize = "initialize",
        Ping = "ping",
        ToolsList = "tools/list",
        ToolsCall = "tools/call",
        PromptsList = "prompts/list",
        PromptsGet = "prompts/get",
        SetLogLevel = "logging/setLevel",
        ResourcesList = "resources/list",
        ResourceTemplatesList = "resources/templates/list",
        ResourcesRead = "resources/read",
        ResourcesSubscribe = "resources/subscribe",
        ResourcesUnsubscribe = "resources/unsubscribe",
        Complete = "completion/complete",
        Discover = "server/discover",
        Listen = "subscriptions/listen",
        TasksGet = "tasks/get",
        TasksUpdate = "tasks/update",
        TasksCancel = "tasks/cancel",
    }
}

wire_names! {
    /// The MCP notifications the bridge (or its relay) sends or reads.
    pub enum Notification {
        Initialized = "notifications/initialized",
        Cancelled = "notifications/cancelled",
        Progress = "notifications/progress",
        Message = "notifications/message",
        ToolsListChanged = "notifications/tools/list_changed",
        ResourcesUpdated = "notifications/resources/updated",
        SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged",
    }
}

impl Method {
    /// Methods of the handshake revisions only (MCP 2026-07-28 dropped them).
    pub fn handshake_only(self) -> bool {
        matches!(
            self,
            Method::Initialize
                | Method::Ping
                | Method::SetLogLevel
                | Method::ResourcesSubscribe
                | Method::ResourcesUnsubscribe
        )
    }

    /// Methods of the stateless revision only.
    pub fn stateless_only(self) -> bool {
        matches!(
            self,
            Method::Discover
                | Method::Listen
                | Method::TasksGet
                | Method::TasksUpdate
                | Method::TasksCancel
        )
    }

    /// Methods a client may send before `initialize` was answered.
    pub fn before_initialize(self) -> bool {
        matches!(self, Method::Initialize | Method::Ping)
    }
}

#[cfg(test)]
mod tests {
    use super::Method;

    #[test]
    fn every_method_parses_from_its_own_wire_name() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.name()), Some(*m));
        }
        for n in super::Notification::ALL {
            assert_eq!(super::Notification::parse(n.name()), Some(*n));
        }
        assert_eq!(Method::parse("resources/watch"), None);
    }

    #[test]
    fn every_method_has_its_own_index_below_the_count() {
        for (i, m) in Method::ALL.iter().enumerate() {
            assert_eq!(m.index(), i, "{m:?}");
        }
        assert_eq!(Method::COUNT, Method::ALL.len());
    }
}
