"""Following the draft: `outdated`, `upgrade`, the Python API migration notes, `migrate` and
`ci`."""
