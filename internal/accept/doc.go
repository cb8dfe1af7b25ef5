// Package accept runs staged acceptance of a GPU node on Kubernetes and
// produces a signed record of the result.
//
// The pieces, each usable alone:
//
//   - pure builders: BuildJob turns a Plan's stage into the exact batch/v1 Job
//     (pinned to the node, all of its GPUs, no retries, deadlines, labels);
//     BuildRBAC gives the minimal Role and ClusterRole the runner needs;
//   - judges: Judge turns a stage's raw output into a StageResult
//     (PASS / FAIL / INCONCLUSIVE / SKIPPED with a reason) through a Parser,
//     against Expectations and NCCL Baselines;
//   - the Runner: creates the Jobs over kubernetes.Interface, waits with
//     watches, saves the logs as evidence, and deletes everything it created;
//   - the record: an in-toto Statement v1 with predicate type PredicateType in
//     a DSSE envelope, signed with Ed25519 or ECDSA P-256 (Sign, Verify).
//
// Nothing here prints, reads the environment or exits: results are values.
package accept
