"""Example answers for the notebook view (built by real pipeline runs with a scripted model), the
headless browser that renders them, and the command that regenerates docs/NOTEBOOK.md's screenshots."""
