//! Prompts typed while the agent worked, sent in order when a turn ends. The session core keeps
//! a copy (it survives a restart): every change here is told to it with `told()`.

use super::app::Effect;
use crate::session::Request;

#[derive(Debug, Default)]
pub struct PromptQueue {
    prompts: Vec<String>,
}

impl PromptQueue {
    /// Adds `text` last; returns the request that tells the core.
    pub fn push(&mut self, text: String) -> Effect {
        self.prompts.push(text);
        self.told()
    }

    /// The prompt queued last, taken back (Up edits it).
    pub fn pop_last(&mut self) -> Option<String> {
        self.prompts.pop()
    }

    /// The prompt to send next, taken out.
    pub fn take_next(&mut self) -> Option<String> {
        (!self.prompts.is_empty()).then(|| self.prompts.remove(0))
    }

    /// The queue a resumed session kept.
    pub fn restore(&mut self, prompts: Vec<String>) {
        self.prompts = prompts;
    }

    pub fn prompts(&self) -> &[String] {
        &self.prompts
    }

    pub fn len(&self) -> usize {
        self.prompts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    /// The request that gives the core the queue as it is now.
    pub fn told(&self) -> Effect {
        Effect::Request(Request::SetQueue(self.prompts.clone()))
    }
}
