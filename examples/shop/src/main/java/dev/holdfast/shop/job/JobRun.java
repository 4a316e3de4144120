package dev.holdfast.shop.job;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/** One run of a leased job (the run log the admin page and the two-instance test read). */
@Entity
@Table(name = "job_run")
public class JobRun {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    @Column(name = "job", length = 64, nullable = false)
    private String job;

    @Column(name = "instance_id", length = 200, nullable = false)
    private String instanceId;

    @Column(name = "token", nullable = false)
    private long token;

    @Column(name = "started", nullable = false)
    private Instant started;

    @Column(name = "finished", nullable = false)
    private Instant finished;

    @Column(name = "written", nullable = false)
    private boolean written;

    /** When the run learned that its lease was lost (it then wrote nothing); null if it kept it. */
    @Column(name = "lease_lost_at")
    private Instant leaseLostAt;

    protected JobRun() {
        // for JPA
    }

    JobRun(
            String job,
            String instanceId,
            long token,
            Instant started,
            Instant finished,
            boolean written,
            Instant leaseLostAt) {
        this.job = job;
        this.instanceId = instanceId;
        this.token = token;
        this.started = started;
        this.finished = finished;
        this.written = written;
        this.leaseLostAt = leaseLostAt;
    }

    public Long getId() {
        return id;
    }

    public String getJob() {
        return job;
    }

    public String getInstanceId() {
        return instanceId;
    }

    public long getToken() {
        return token;
    }

    public Instant getStarted() {
        return started;
    }

    public Instant getFinished() {
        return finished;
    }

    public boolean isWritten() {
        return written;
    }

    public Instant getLeaseLostAt() {
        return leaseLostAt;
    }
}
