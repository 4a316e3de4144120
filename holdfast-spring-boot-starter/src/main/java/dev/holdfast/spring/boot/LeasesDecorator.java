package dev.holdfast.spring.boot;

import dev.holdfast.lease.LeaseService;
import dev.holdfast.lease.Leases;
import org.springframework.core.Ordered;

/**
 * Wraps the calls of the auto-configured {@link LeaseService} ({@link LeaseService.Builder#decoratedBy}), so that
 * whichever type an application injects ({@code LeaseService} or {@code Leases}: one bean) goes through it. Every
 * bean of this type is applied, in {@link Ordered} order: the first is the outermost. The starter's own are the
 * exception translation ({@link #TRANSLATION_ORDER}), the meters ({@link #METRICS_ORDER}) and the observations
 * ({@link #OBSERVATIONS_ORDER}); a decorator without an order is the innermost.
 */
@FunctionalInterface
public interface LeasesDecorator {

    /** Outermost: callers get Spring's exceptions, the decorators inside still see Holdfast's. */
    int TRANSLATION_ORDER = Ordered.HIGHEST_PRECEDENCE + 100;
    /** Inside the translation, outside the observations. */
    int METRICS_ORDER = 0;
    /** Inside the meters: the observation is in scope while the service works. */
    int OBSERVATIONS_ORDER = 100;

    /**
     * @param leases the calls to wrap (the service's own, or an inner decorator's); never the service itself
     * @return leases that delegate to {@code leases}
     */
    Leases decorate(Leases leases);
}
