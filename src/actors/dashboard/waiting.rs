//! Requests waiting for the person in the page (agents' diffs, tasks' tool requests):
//! each has the view the page lists and the channel its answer goes to. One whose asker
//! stopped waiting (its call was cancelled or timed out) is forgotten.

use tokio::sync::oneshot;

/// Requests with views `V` waiting for answers `A`, oldest first.
pub struct Waiting<V, A> {
    next_id: u64,
    pending: Vec<(V, oneshot::Sender<A>)>,
}

impl<V, A> Default for Waiting<V, A> {
    fn default() -> Self {
        Self {
            next_id: 0,
            pending: Vec::new(),
        }
    }
}

impl<V: Clone, A: Clone> Waiting<V, A> {
    /// Adds the view `make` builds with the next id; the receiver gets the answer.
    pub fn add(&mut self, make: impl FnOnce(u64) -> V) -> oneshot::Receiver<A> {
        self.next_id += 1;
        let (reply, answer) = oneshot::channel();
        self.pending.push((make(self.next_id), reply));
        answer
    }

    /// Answers every request `which` selects with `answer`; how many there were.
    pub fn settle(&mut self, which: impl Fn(&V) -> bool, answer: A) -> usize {
        self.settle_with(which, |_| answer.clone())
    }

    /// Answers every request `which` selects with what `answer` makes of its view; how
    /// many there were.
    pub fn settle_with(&mut self, which: impl Fn(&V) -> bool, answer: impl Fn(&V) -> A) -> usize {
        let (settled, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|(view, _)| which(view));
        self.pending = kept;
        let n = settled.len();
        for (view, reply) in settled {
            let _ = reply.send(answer(&view));
        }
        n
    }

    /// Forgets every request `which` selects without answering it (its asker sees its
    /// receiver close); how many there were.
    pub fn withdraw(&mut self, which: impl Fn(&V) -> bool) -> usize {
        let before = self.pending.len();
        self.pending.retain(|(view, _)| !which(view));
        before - self.pending.len()
    }

    /// Changes the views `which` selects with `change`; how many there were.
    pub fn update(&mut self, which: impl Fn(&V) -> bool, mut change: impl FnMut(&mut V)) -> usize {
        let mut n = 0;
        for (view, _) in self.pending.iter_mut().filter(|(view, _)| which(view)) {
            change(view);
            n += 1;
        }
        n
    }

    /// True when a request `which` selects waits.
    pub fn any(&self, which: impl Fn(&V) -> bool) -> bool {
        self.pending.iter().any(|(view, _)| which(view))
    }

    /// Forgets requests nobody waits for any more; how many.
    pub fn forget_abandoned(&mut self) -> usize {
        let before = self.pending.len();
        self.pending.retain(|(_, reply)| !reply.is_closed());
        before - self.pending.len()
    }

    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    pub fn views(&self) -> Vec<V> {
        self.pending.iter().map(|(view, _)| view.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_reach_the_selected_askers_once_and_abandoned_requests_go() {
        let mut w: Waiting<(u64, &str), bool> = Waiting::default();
        let mut a = w.add(|id| (id, "a"));
        let mut b = w.add(|id| (id, "b"));
        drop(w.add(|id| (id, "gone")));
        assert_eq!(w.forget_abandoned(), 1);
        assert_eq!(w.settle(|v| v.1 == "a", true), 1);
        assert_eq!(a.try_recv(), Ok(true));
        assert_eq!(w.settle(|v| v.1 == "a", false), 0, "answered once");
        assert_eq!(w.views(), vec![(2, "b")]);
        assert_eq!(w.settle(|_| true, false), 1);
        assert_eq!(b.try_recv(), Ok(false));
        assert!(w.is_empty());
        let mut c = w.add(|id| (id, "c"));
        assert_eq!(w.withdraw(|v| v.1 == "c"), 1);
        assert_eq!(c.try_recv(), Err(oneshot::error::TryRecvError::Closed));
        assert!(w.is_empty());
    }
}
