# docs: sources are added here
