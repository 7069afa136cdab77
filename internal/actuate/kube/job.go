package kube

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/bursar-dev/bursar/internal/actuate"
	"github.com/bursar-dev/bursar/internal/fleet"
)

// AnnotationCheckpoint is set on a job's Job, to the time of the request, when a reclaim notice
// reaches one of its instances: the job's pods (or an operator watching the Job) save their
// progress before the instance goes. Its value changes with every request, so a watcher sees each.
const AnnotationCheckpoint = "bursar.dev/checkpoint-requested"

// A job runs as one batch/v1 Job per location and market, created suspended by its owner: the
// arbiter starts it by setting spec.suspend to false (one replica) and stops it by setting it to
// true (zero), so Kubernetes keeps the Job's pods, history and checkpoint volume as it always
// does. Its identity needs get and update on jobs (batch).

// isJob says whether the target is a batch/v1 Job.
func (t target) isJob() bool { return t.kind == fleet.KubeJob }

func (t target) getJob(ctx context.Context) (*batchv1.Job, error) {
	return t.client.BatchV1().Jobs(t.namespace).Get(ctx, t.name, metav1.GetOptions{})
}

// scaleJob starts (replicas ≥ 1) or suspends (0) the Job, or marks it for a checkpoint, on a
// fresh read after a conflict. It returns what it changed.
func (t target) scaleJob(ctx context.Context, tg actuate.Target, now time.Time) (change, error) {
	var c change
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c = change{}
		j, err := t.getJob(ctx)
		if err != nil {
			return err
		}
		if tg.Kind == actuate.KindCheckpoint {
			if j.Annotations == nil {
				j.Annotations = map[string]string{}
			}
			j.Annotations[AnnotationCheckpoint] = now.UTC().Format(time.RFC3339)
			c = change{uid: j.UID, checkpoint: true}
		} else {
			suspend := tg.Replicas < 1
			if j.Spec.Suspend != nil && *j.Spec.Suspend == suspend {
				return nil
			}
			c = change{uid: j.UID, from: jobDesired(j), to: min(tg.Replicas, 1)}
			j.Spec.Suspend = &suspend
		}
		_, err = t.client.BatchV1().Jobs(t.namespace).Update(ctx, j, metav1.UpdateOptions{})
		return err
	})
	return c, err
}

// jobDesired is 1 for a running Job, 0 for a suspended one.
func jobDesired(j *batchv1.Job) int {
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return 0
	}
	return 1
}

// jobReady counts the Job's ready pods, capped at the one replica a job has.
func jobReady(j *batchv1.Job) int {
	if j.Status.Ready != nil {
		return min(int(*j.Status.Ready), 1)
	}
	return 0
}
