# test/slurm: bmpi ranks started by Slurm's srun --mpi=pmix, with a private
# munged/slurmctld/slurmd. Root only; skips (77) without Slurm.
TESTS += test/slurm/srun.sh
EXTRA_DIST += test/slurm/srun.sh
