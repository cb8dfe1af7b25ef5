// Package hostile is gpuctl's hostile corpus: inputs an attacker with a pull
// request controls (Terraform folders, blueprints, Karpenter YAML, waivers
// and policy files, specs, plan and generate --check output trees, records
// for verify and report), one txtar archive per case under cases/, each run
// against the gpuctl binary in a child process under an address-space limit
// of 2 GiB, with sentinel secrets in its environment, next to its folder and
// in /etc/passwd.
//
// The harness is behind the build tag hostile so that a plain `go test
// ./...` does not time it under parallel load:
//
//	make test-hostile                       # builds bin/gpuctl, runs every case
//	GPUCTL_BIN=bin/gpuctl go test -tags hostile -count=1 ./test/hostile
//	go test -tags hostile -count=1 ./test/hostile -run 'TestHostile/terraform/'
//
// Each case asserts: the exit code its header expects (2 or 3 for bad input
// or findings; for report, 0 with the record marked unsigned or unverified
// on the page), a message naming file:line:col or the path, at most 2 s of
// wall time (GPUCTL_HOSTILE_WALL overrides, in seconds) and 200 MiB of peak
// RSS (the child's rusage), no Go runtime trace, and none of the sentinels
// in stdout, stderr or any file written under the case's folder. A case
// still running after 10 s is killed and fails.
//
// A case archive starts with a "case" file of header lines:
//
//	args: validate repo/infra --as-of 2026-11-29   the command line (after gpuctl; * globs as in a shell)
//	setup: symlink NAME -> TARGET                  a symbolic link (TARGET as written)
//	setup: mkfifo NAME                             a FIFO nobody writes
//	setup: rm NAME | mkdir NAME | append NAME TEXT
//	setup: run ARGS...                             gpuctl ARGS, unconfined; must exit 0
//	gen: GENERATOR NAME ARGS...                    a large input, written at test time (gen_test.go)
//	expect: exit 2|3                               the exit codes allowed
//	expect: exit 0|2 trust unsigned|unverified     report: the record's data-trust on the page (exit 2: no page)
//	where: REGEXP                                  the message must match (default: a path of the case)
//	absent: TEXT                                   text that must not appear in the output
//	refuse: REGEXP                                 nor anything that matches (e.g. (?m)^kind: Secret)
//	keep: NAME                                     a file that must still exist afterwards
//
// In file contents, args and setup lines $SECRET is the absolute path of the
// sentinel file, $WORK that of the case's folder (the child's working
// directory) and $FIXTURES that of the repository's record fixtures.
package hostile
