package dev.holdfast.shop.web;

import dev.holdfast.Holder;
import dev.holdfast.lease.Lease;
import dev.holdfast.lease.Leases;
import dev.holdfast.pessimistic.offline.HeldLock;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.shop.job.JobResult;
import dev.holdfast.shop.job.JobRunRepository;
import dev.holdfast.shop.job.NightlyReportJob;
import dev.holdfast.shop.waits.TimedOutWaits;
import jakarta.persistence.EntityManager;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.servlet.mvc.support.RedirectAttributes;

import java.security.Principal;
import java.util.List;
import java.util.Optional;

/**
 * Scenario 6: every live offline lock and lease, each with a button that breaks it, and the last lock
 * waits that ran out with who blocked them ({@link TimedOutWaits}); and scenario 5's
 * leased job: its last result with the fencing token that wrote it, recent runs, "Run now". ADMIN only
 * (SecurityConfiguration), CSRF-protected like every POST. The operator view never shows lock ids.
 */
@Controller
@RequestMapping("/admin/locks")
class AdminLocksController {

    /** More than an admin can read; the page says when the list is cut. */
    static final int MAX_SHOWN = 500;

    private final JdbcLockManager locks;
    private final Leases leases;
    private final NightlyReportJob job;
    private final JobRunRepository runs;
    private final EntityManager em;
    private final Texts texts;
    private final ViewSupport.Formats fmt;
    private final TimedOutWaits waits;

    AdminLocksController(
            JdbcLockManager locks,
            Leases leases,
            NightlyReportJob job,
            JobRunRepository runs,
            EntityManager em,
            Texts texts,
            ViewSupport.Formats fmt,
            TimedOutWaits waits) {
        this.waits = waits;
        this.texts = texts;
        this.fmt = fmt;
        this.locks = locks;
        this.leases = leases;
        this.job = job;
        this.runs = runs;
        this.em = em;
    }

    @GetMapping
    String list(Model model) {
        List<HeldLock> held = locks.heldLocks(null, null, MAX_SHOWN);
        model.addAttribute("locks", held);
        model.addAttribute("cut", held.size() == MAX_SHOWN);
        List<Lease> live = leases.list();
        model.addAttribute("leases", live);
        model.addAttribute("waits", waits.recent());
        model.addAttribute("jobResult", em.find(JobResult.class, NightlyReportJob.JOB));
        model.addAttribute("jobRuns", runs.findTop10ByJobOrderByIdDesc(NightlyReportJob.JOB));
        model.addAttribute("instanceId", job.instanceId());
        return "admin-locks";
    }

    @PostMapping("/break-lease")
    String breakLease(@RequestParam(required = false) String name, Principal admin, RedirectAttributes redirect) {
        if (name == null || name.isBlank()) {
            throw new BadRequestException("bad.which-lease");
        }
        Optional<Lease> holder;
        try {
            holder = leases.find(name).filter(l -> !l.isReleased());
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("bad.not-a-lease", name);
        }
        if (leases.forceRelease(name, admin.getName())) {
            Notices.success(
                    redirect,
                    texts.html(
                            "notice.lease-broken",
                            name,
                            holder.map(l -> texts.get(
                                            "notice.lease-broken.holder", l.owner(), String.valueOf(l.token())))
                                    .orElse(""),
                            admin.getName()));
        } else {
            Notices.failure(redirect, texts.html("notice.lease-not-live", name));
        }
        return "redirect:/admin/locks";
    }

    @PostMapping("/run-job")
    String runJob(Principal admin, RedirectAttributes redirect) {
        NightlyReportJob.Outcome outcome = job.runOnce(admin.getName());
        if (!outcome.ran()) {
            // Runs are exclusive per run, not per instance: a run of this very instance may hold the lease.
            Texts.Html since = new Texts.Html(fmt.clockHtml(outcome.heldSince()));
            Holder h = outcome.holder();
            String token = h == null || h.token() == null ? "" : String.valueOf(h.token());
            Texts.Html until = new Texts.Html(h == null ? "" : fmt.clockHtml(h.expiresAt()));
            if (outcome.heldBy() == null) {
                Notices.failure(redirect, texts.html("notice.job-not-run.unknown"));
            } else if (outcome.heldBy().equals(job.instanceId())) {
                Notices.failure(
                        redirect,
                        texts.html("notice.job-not-run.same-instance", outcome.heldBy(), since, token, until));
            } else {
                Notices.failure(redirect, texts.html("notice.job-not-run", outcome.heldBy(), since, token, until));
            }
        } else if (outcome.leaseLostAt() != null) {
            Notices.failure(
                    redirect,
                    texts.html(
                            "notice.job-lease-lost",
                            job.instanceId(),
                            String.valueOf(outcome.token()),
                            new Texts.Html(fmt.clockHtml(outcome.leaseLostAt())),
                            outcome.brokenBy() == null
                                    ? ""
                                    : texts.get("notice.job-lease-lost.broken-by", outcome.brokenBy())));
        } else if (outcome.written()) {
            Notices.success(redirect, texts.html("notice.job-ran", job.instanceId(), String.valueOf(outcome.token())));
        } else {
            Notices.failure(
                    redirect,
                    texts.html("notice.job-ran-unwritten", job.instanceId(), String.valueOf(outcome.token())));
        }
        return "redirect:/admin/locks";
    }

    @PostMapping("/break")
    String breakLock(
            @RequestParam(required = false) String type,
            @RequestParam(required = false) String id,
            Principal admin,
            RedirectAttributes redirect) {
        if (type == null || id == null || type.isBlank() || id.isBlank()) {
            throw new BadRequestException("bad.which-lock");
        }
        Optional<HeldLock> holder;
        try {
            holder = locks.holder(type, id);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("bad.not-a-lock", type + "/" + id);
        }
        if (locks.forceRelease(type, id, admin.getName())) {
            Notices.success(
                    redirect,
                    texts.html(
                            "notice.lock-broken",
                            type,
                            id,
                            holder.map(h -> texts.get("notice.lock-broken.holder", h.owner()))
                                    .orElse(""),
                            admin.getName()));
        } else {
            Notices.failure(redirect, texts.html("notice.lock-not-live", type, id));
        }
        return "redirect:/admin/locks";
    }
}
