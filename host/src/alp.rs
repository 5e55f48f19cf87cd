//! ALP, the agent learning pipeline (docs/learning.md): repeated work in the learning journal
//! (`crate::lcj`) becomes reviewed, explainable per-site knowledge (`crate::pks`), and only
//! through gates; a single lucky run never promotes anything, and no learned field triggers an
//! action by itself.
//!
//! - [`gates`]: the conditions of each learning-level transition.
//! - [`promote`]: `nova.learn_promote`; [`explain`]: `nova.explain`; [`feedback`]:
//!   `nova.learn_feedback`.
//! - [`suggest`]: `nova.learn_suggest` (clusters, scores, drift); [`generate`]:
//!   `nova.learn_generate` (proposals, patches, L0 candidates).
//! - [`semantic`]: semantic learning opportunities (detectors, the `pksSemanticLearning`
//!   prompt, escalation, domain-exit summaries); [`resolve`]: `nova.learn_resolve_opportunity`.
//! - [`learn_mode`]: Learn Mode's guidance, deliverable and progress (`nova.get_instructions`).
//! - [`autonomous`]: candidates stored without an agent asking (FR-1), under strict conditions.

pub mod autonomous;
pub mod explain;
pub mod feedback;
pub mod gates;
pub mod generate;
pub mod learn_mode;
pub mod promote;
pub mod resolve;
pub mod semantic;
pub mod suggest;
