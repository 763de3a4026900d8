//! Tool calls and their latency over time, sampled from the bridge's own metrics (the
//! counters behind `/metrics`) so that the page's charts have an hour of history the
//! moment it opens.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde::Serialize;

use crate::metrics::{Metrics, ToolTotals};

/// Samples kept (one per interval: an hour at 10 s).
pub const MAX_SAMPLES: usize = 360;

/// One tool's calls during one interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSample {
    pub tool: String,
    pub calls: u64,
    /// Calls that ended in error, timeout or cancellation.
    pub failed: u64,
    /// Time spent in those calls, in seconds.
    pub seconds: f64,
}

/// What happened during one interval (tools without calls are left out).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// Unix ms at the end of the interval.
    pub at: u64,
    pub tools: Vec<ToolSample>,
}

/// Running totals per tool at the last sample, and the samples.
pub struct Sampler {
    metrics: Arc<Metrics>,
    last: BTreeMap<String, ToolTotals>,
    samples: VecDeque<Sample>,
}

impl Sampler {
    /// A sampler starting from the totals as they are now.
    pub fn new(metrics: Arc<Metrics>) -> Self {
        let last = metrics.tool_totals();
        Self {
            metrics,
            last,
            samples: VecDeque::new(),
        }
    }

    /// Records what changed since the previous sample.
    pub fn sample(&mut self, at: u64) {
        let now = self.metrics.tool_totals();
        let tools = now
            .iter()
            .filter_map(|(tool, t)| {
                let before = self.last.get(tool).copied().unwrap_or_default();
                (t.calls > before.calls).then(|| ToolSample {
                    tool: tool.clone(),
                    calls: t.calls - before.calls,
                    failed: t.failed.saturating_sub(before.failed),
                    seconds: (t.seconds - before.seconds).max(0.0),
                })
            })
            .collect();
        self.last = now;
        if self.samples.len() >= MAX_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back(Sample { at, tools });
    }

    pub fn samples(&self) -> Vec<Sample> {
        self.samples.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::activity::CallStatus;

    #[test]
    fn a_sample_holds_the_calls_of_its_interval_only() {
        let metrics = Arc::new(Metrics::new());
        metrics
            .tool_meter("readFile")
            .record(CallStatus::Success, 0.5);
        let mut s = Sampler::new(Arc::clone(&metrics));
        metrics
            .tool_meter("readFile")
            .record(CallStatus::Success, 0.25);
        metrics
            .tool_meter("readFile")
            .record(CallStatus::Error, 0.25);
        metrics
            .tool_meter("gitStatus")
            .record(CallStatus::Timeout, 1.0);
        s.sample(10);
        s.sample(20);
        let samples = s.samples();
        assert_eq!(samples.len(), 2);
        let read = samples[0]
            .tools
            .iter()
            .find(|t| t.tool == "readFile")
            .unwrap();
        assert_eq!((read.calls, read.failed), (2, 1));
        assert!((read.seconds - 0.5).abs() < 1e-9, "{read:?}");
        let git = samples[0]
            .tools
            .iter()
            .find(|t| t.tool == "gitStatus")
            .unwrap();
        assert_eq!((git.calls, git.failed), (1, 1));
        assert!(samples[1].tools.is_empty());
    }
}
