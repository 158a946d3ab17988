# test/unit: sources are added here
