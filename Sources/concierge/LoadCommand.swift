// Placeholder: `concierge load` is being written (IntentLoad).
