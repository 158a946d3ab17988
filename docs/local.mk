# docs: the living design notes, shipped in the tarball.
EXTRA_DIST += docs/architecture.md
