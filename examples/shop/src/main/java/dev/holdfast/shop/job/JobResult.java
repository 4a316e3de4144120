package dev.holdfast.shop.job;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/**
 * The result of a leased job, one row per job, written only through a fenced update: {@code fence_token}
 * holds the highest lease token that wrote it, so a run whose lease was lost cannot overwrite a newer one.
 */
@Entity
@Table(name = "job_result")
public class JobResult {

    @Id
    @Column(name = "job", length = 64)
    private String job;

    @Column(name = "summary", length = 400)
    private String summary;

    @Column(name = "run_by", length = 200)
    private String runBy;

    @Column(name = "finished")
    private Instant finished;

    @Column(name = "fence_token")
    private Long fenceToken;

    protected JobResult() {
        // for JPA
    }

    JobResult(String job) {
        this.job = job;
    }

    public String getJob() {
        return job;
    }

    public String getSummary() {
        return summary;
    }

    public String getRunBy() {
        return runBy;
    }

    public Instant getFinished() {
        return finished;
    }

    public Long getFenceToken() {
        return fenceToken;
    }
}
