package dev.holdfast.shop.job;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Runs the nightly report on its schedule ({@code shop.job.interval}, first after
 * {@code shop.job.initial-delay}). {@code shop.job.schedule.enabled=false} leaves the schedule out, so
 * that tests start runs themselves ("Run now", {@link NightlyReportJob#runOnce()}) and never race it.
 */
@Component
@ConditionalOnProperty(name = "shop.job.schedule.enabled", havingValue = "true", matchIfMissing = true)
class NightlyReportSchedule {

    private final NightlyReportJob job;

    NightlyReportSchedule(NightlyReportJob job) {
        this.job = job;
    }

    @Scheduled(fixedDelayString = "${shop.job.interval:PT1M}", initialDelayString = "${shop.job.initial-delay:PT1M}")
    void run() {
        job.runOnce();
    }
}
