//! The MCP requests the bridge answers, by wire name, and which revision each belongs
//! to: the Session dispatches on them, `/mcp` and the relay refuse what a revision does
//! not have before a session is involved.

/// The MCP requests the bridge answers (both revisions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Initialize,
    Ping,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    SetLogLevel,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    Complete,
    Discover,
    Listen,
    TasksGet,
    TasksUpdate,
    TasksCancel,
}

impl Method {
    const ALL: [Method; 18] = [
        Method::Initialize,
        Method::Ping,
        Method::ToolsList,
        Method::ToolsCall,
        Method::PromptsList,
        Method::PromptsGet,
        Method::SetLogLevel,
        Method::ResourcesList,
        Method::ResourceTemplatesList,
        Method::ResourcesRead,
        Method::ResourcesSubscribe,
        Method::ResourcesUnsubscribe,
        Method::Complete,
        Method::Discover,
        Method::Listen,
        Method::TasksGet,
        Method::TasksUpdate,
        Method::TasksCancel,
    ];

    /// How many there are: [`Method::index`] is below it.
    pub const COUNT: usize = Self::ALL.len();

    /// Its place among the methods (for tables indexed by method).
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The wire name (a `'static` label for metrics).
    pub fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::SetLogLevel => "logging/setLevel",
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesUnsubscribe => "resources/unsubscribe",
            Method::Complete => "completion/complete",
            Method::Discover => "server/discover",
            Method::Listen => "subscriptions/listen",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
        }
    }

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
            assert_eq!(Method::parse(m.name()), Some(m));
        }
        assert_eq!(Method::parse("resources/watch"), None);
    }

    #[test]
    fn every_method_has_its_own_index_below_the_count() {
        for (i, m) in Method::ALL.into_iter().enumerate() {
            assert_eq!(m.index(), i, "{m:?}");
        }
        assert_eq!(Method::COUNT, Method::ALL.len());
    }
}
