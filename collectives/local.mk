# collectives: sources are added here
