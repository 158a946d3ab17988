# test/slurm: bmpi ranks started by Slurm's srun --mpi=pmix, with a private
# munged/slurmctld/slurmd (srun.sh: one node; cluster.sh: three simulated
# nodes in network namespaces, and bmpirun inside salloc; cluster-lib.sh:
# that cluster's bring-up and teardown, also for bench/startup-hosts).
# Root only; skip (77) without Slurm.
TESTS += test/slurm/srun.sh test/slurm/cluster.sh
EXTRA_DIST += test/slurm/srun.sh test/slurm/cluster.sh test/slurm/cluster-lib.sh
