//! What a session remembers for its agent across connections (and hands over when it
//! merges): the files it opened, the file versions it last read or wrote (for
//! concurrent-modification checks) and its bridge-side terminals. Tools read and write
//! it through the messages of `MemoryHandle` (in `actors::messages::session`).

use std::path::PathBuf;

use actix::prelude::*;

use super::{Session, MAX_OPENED_FILES, MAX_READ_VERSIONS, MAX_TERMINALS};
use crate::actors::messages::session::{
    Absorb, ChangedBy, Keep, Kept, KnownVersion, NativeCursor, NativeEnd, NativeSettle,
    NativeStart, NativeToRead, OpenedFiles, RecordOpened, RecordTerminal, RecordVersion, Saw,
    TakeNotice, TerminalRun, Terminals,
};
use crate::coordination::native::Ended;
use crate::workspace::files::Fingerprint;

/// Moves `item` to the back of a recency list (dropping an older `same` entry) and
/// keeps the last `cap` entries.
fn push_recent<T>(list: &mut Vec<T>, cap: usize, same: impl Fn(&T) -> bool, item: T) {
    list.retain(|x| !same(x));
    list.push(item);
    if list.len() > cap {
        let excess = list.len() - cap;
        list.drain(..excess);
    }
}

impl Session {
    fn remember_opened(&mut self, path: PathBuf) {
        push_recent(
            &mut self.opened_files,
            MAX_OPENED_FILES,
            |p| p == &path,
            path.clone(),
        );
    }

    fn remember_terminal(&mut self, name: String, run: TerminalRun) {
        let key = name.clone();
        push_recent(
            &mut self.terminals,
            MAX_TERMINALS,
            |(n, _)| n == &key,
            (name, run),
        );
    }
}

impl Handler<Absorb> for Session {
    type Result = ();
    fn handle(&mut self, msg: Absorb, _: &mut Context<Self>) {
        for path in msg.opened_files {
            self.remember_opened(path);
        }
        for (path, fp) in msg.read_versions {
            self.read_versions.entry(path).or_insert(fp);
        }
        for (name, run) in msg.terminals {
            self.remember_terminal(name, run);
        }
        self.client_pid = self.client_pid.or(msg.client_pid);
        self.awareness.absorb(msg.awareness);
        self.native.absorb(msg.native);
    }
}

impl Handler<NativeStart> for Session {
    type Result = Option<Ended>;
    fn handle(&mut self, msg: NativeStart, _: &mut Context<Self>) -> Self::Result {
        self.native.start(msg.0)
    }
}

impl Handler<NativeCursor> for Session {
    type Result = Option<u64>;
    fn handle(&mut self, msg: NativeCursor, _: &mut Context<Self>) -> Option<u64> {
        self.native.cursor(&msg.0)
    }
}

impl Handler<NativeToRead> for Session {
    type Result = MessageResult<NativeToRead>;
    fn handle(&mut self, msg: NativeToRead, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.native.to_read(msg.0))
    }
}

impl Handler<NativeSettle> for Session {
    type Result = MessageResult<NativeSettle>;
    fn handle(&mut self, msg: NativeSettle, _: &mut Context<Self>) -> Self::Result {
        let mut ended = self.native.discover(msg.discovered);
        ended.extend(
            self.native
                .settle(&msg.transcript, msg.offset, msg.outcomes, msg.now_ms),
        );
        MessageResult((ended, self.native.waiting(msg.now_ms)))
    }
}

impl Handler<NativeEnd> for Session {
    type Result = Option<Ended>;
    fn handle(&mut self, msg: NativeEnd, _: &mut Context<Self>) -> Self::Result {
        self.native
            .end(&msg.tool_use_id, msg.failed, msg.at_ms, msg.error)
    }
}

impl Handler<Saw> for Session {
    type Result = ();
    fn handle(&mut self, msg: Saw, _: &mut Context<Self>) {
        self.awareness.saw(msg.path, msg.at_ms);
    }
}

impl Handler<ChangedBy> for Session {
    type Result = ();
    fn handle(&mut self, msg: ChangedBy, _: &mut Context<Self>) {
        self.awareness
            .changed_by(&msg.path, &msg.display, &msg.by, msg.at_ms);
    }
}

impl Handler<TakeNotice> for Session {
    type Result = Option<String>;
    fn handle(&mut self, _: TakeNotice, _: &mut Context<Self>) -> Self::Result {
        self.awareness.take_notice()
    }
}

impl Handler<Keep> for Session {
    type Result = MessageResult<Keep>;
    fn handle(&mut self, _: Keep, _: &mut Context<Self>) -> Self::Result {
        MessageResult(Kept {
            opened_files: self.opened_files.clone(),
            client: self.last_client.as_ref().map(|l| l.client.clone()),
            ended_calls: self.native.finished_ids(),
            created_at: self.created_at.clone(),
            awareness: self.awareness.export(),
        })
    }
}

impl Handler<OpenedFiles> for Session {
    type Result = MessageResult<OpenedFiles>;
    fn handle(&mut self, _: OpenedFiles, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.opened_files.clone())
    }
}

impl Handler<RecordOpened> for Session {
    type Result = ();
    fn handle(&mut self, msg: RecordOpened, _: &mut Context<Self>) {
        self.remember_opened(msg.0);
    }
}

impl Handler<RecordVersion> for Session {
    type Result = ();
    fn handle(&mut self, msg: RecordVersion, _: &mut Context<Self>) {
        match msg.fingerprint {
            Some(fp) => {
                // Read or written through a bridge tool: the agent knows this content.
                self.awareness
                    .saw(msg.path.clone(), crate::actors::activity_log::now_ms());
                if self.read_versions.len() >= MAX_READ_VERSIONS
                    && !self.read_versions.contains_key(&msg.path)
                {
                    // Forget an arbitrary entry: the cost is one missed conflict check.
                    if let Some(k) = self.read_versions.keys().next().cloned() {
                        self.read_versions.remove(&k);
                    }
                }
                self.read_versions.insert(msg.path, fp);
            }
            None => {
                self.read_versions.remove(&msg.path);
            }
        }
    }
}

impl Handler<KnownVersion> for Session {
    type Result = Option<Fingerprint>;
    fn handle(&mut self, msg: KnownVersion, _: &mut Context<Self>) -> Self::Result {
        self.read_versions.get(&msg.0).copied()
    }
}

impl Handler<RecordTerminal> for Session {
    type Result = ();
    fn handle(&mut self, msg: RecordTerminal, _: &mut Context<Self>) {
        self.remember_terminal(msg.name, msg.run);
    }
}

impl Handler<Terminals> for Session {
    type Result = MessageResult<Terminals>;
    fn handle(&mut self, _: Terminals, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.terminals.clone())
    }
}
