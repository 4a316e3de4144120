package dev.holdfast.hibernate;

import org.hibernate.boot.Metadata;
import org.hibernate.boot.spi.BootstrapContext;
import org.hibernate.engine.config.spi.ConfigurationService;
import org.hibernate.engine.config.spi.StandardConverters;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.event.service.spi.EventListenerRegistry;
import org.hibernate.event.spi.EventType;
import org.hibernate.integrator.spi.Integrator;

/**
 * Registers the aggregate-root version bump ({@link AggregateMember}) with every Hibernate session
 * factory; found by {@link java.util.ServiceLoader}, so adding the jar is enough. Set the property
 * {@value #ENABLED} to {@code false} to turn it off.
 */
public final class AggregateRootVersionIntegrator implements Integrator {

    /** Configuration property; {@code true} by default. */
    public static final String ENABLED = "holdfast.aggregate-root-version.enabled";

    @Override
    public void integrate(
            Metadata metadata, BootstrapContext bootstrapContext, SessionFactoryImplementor sessionFactory) {
        boolean enabled = sessionFactory
                .getServiceRegistry()
                .requireService(ConfigurationService.class)
                .getSetting(ENABLED, StandardConverters.BOOLEAN, true);
        if (!enabled) {
            return;
        }
        RootVersionBump bump = new RootVersionBump();
        EventListenerRegistry listeners = sessionFactory.getEventListenerRegistry();
        // Prepended: the bump runs before Hibernate's own flush computes its updates, so a root
        // that is also dirty is then updated from its new version, never from a stale one.
        listeners.prependListeners(EventType.FLUSH, bump);
        listeners.prependListeners(EventType.AUTO_FLUSH, bump);
        listeners.appendListeners(EventType.POST_INSERT, bump);
    }
}
