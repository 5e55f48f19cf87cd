//! Permission prompts waiting for the person: an agent's question (`nova.permission_prompt`,
//! in [`super::permission`]) waits here until the person approves or denies it in the extension,
//! or it times out.

use std::collections::HashMap;
use std::sync::Mutex;

use nova_shared::ui::Prompt;
use tokio::sync::oneshot;

use super::control::Control;
use crate::time::now_ms;

/// Prompts waiting for the person.
#[derive(Debug, Default)]
pub struct Prompts {
    waiting: Mutex<HashMap<String, (Prompt, oneshot::Sender<String>)>>,
}

impl Prompts {
    /// The prompts waiting, oldest first.
    pub fn pending(&self) -> Vec<Prompt> {
        let w = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<Prompt> = w.values().map(|(p, _)| p.clone()).collect();
        out.sort_by_key(|p| p.asked_at_ms);
        out
    }

    /// The person answered: stores the decision and wakes the waiting call. None when the
    /// prompt is not waiting (answered already, timed out, unknown).
    pub fn answer(&self, control: &Control, prompt_id: &str, decision: &str) -> Option<Prompt> {
        let (mut prompt, tx) = self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(prompt_id)?;
        prompt.decision = decision.to_owned();
        prompt.decided_at_ms = Some(now_ms());
        prompt.expires_at_ms = None;
        if let Err(e) = control.decide(&prompt) {
            tracing::error!(error = %e, "cannot store the prompt decision");
        }
        let _ = tx.send(decision.to_owned());
        Some(prompt)
    }

    /// Queues `prompt`; the receiver gets the person's decision.
    pub fn insert(&self, prompt: Prompt) -> oneshot::Receiver<String> {
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).insert(prompt.prompt_id.clone(), (prompt, tx));
        rx
    }

    /// Drops an unanswered prompt that timed out.
    pub fn expire(&self, prompt_id: &str) -> Option<Prompt> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).remove(prompt_id).map(|(p, _)| p)
    }
}
