package bus

import (
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// BucketJobs holds the deadline-bound jobs: per job, its submission (job.<name>: the spec, who
// submitted it and when, and whether it was cancelled) and the arbiter's running state
// (state.<name>: work done, cost, preemptions). Submissions are written by whichever arbiter
// answers "arbiter job submit|cancel", the state by the leader only, so a job and its progress
// survive restarts and a change of leader.
const BucketJobs = "bursar_jobs"

// Key prefixes in BucketJobs.
const (
	JobSpecPrefix  = "job."
	JobStatePrefix = "state."
)

func jobsBucket(o Options) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketJobs, Description: "deadline-bound jobs: submissions and their state",
		History: 8, Replicas: o.Replicas, Storage: jetstream.FileStorage, MaxBytes: o.BucketMaxBytes, MaxValueSize: o.BucketMaxValue}
}

// JobAdminSubject is the subject user asks the arbiter to submit or cancel a job on
// (bursar.admin.job.<user>.<op>, op submit or cancel). The arbiter records user as the submitter.
func JobAdminSubject(user, op string) string {
	return adminSubject("job", user, op)
}

// addJobPermissions grants a CLI user what "arbiter job" needs: requests on its own
// JobAdminSubject and reads of the jobs bucket (for status). Only the arbiter writes the bucket.
func addJobPermissions(p *server.Permissions, user string) *server.Permissions {
	p.Publish.Allow = append(p.Publish.Allow, JobAdminSubject(user, ">"))
	p.Publish.Allow = append(p.Publish.Allow, readBucket(BucketJobs)...)
	return p
}
