package dev.holdfast.quickstart;

// tag::quickstart-application[]
import dev.holdfast.lease.Leases;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import java.time.Duration;

@SpringBootApplication
@RestController
public class QuickstartApplication {

    private final Leases leases;

    QuickstartApplication(Leases leases) {
        this.leases = leases;
    }

    /** Starts the nightly report, unless a server runs it already: one at a time in the whole cluster. */
    @PostMapping("/report")
    String report() {
        return leases.tryAcquire("nightly-report", "server-" + ProcessHandle.current().pid(), Duration.ofMinutes(5))
                .map(lease -> "report started under lease token " + lease.token())
                .orElse("another server runs the report");
    }

    public static void main(String[] args) {
        SpringApplication.run(QuickstartApplication.class, args);
    }
}
// end::quickstart-application[]
