package io.github.tieredretry.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ContextConfiguration;

/**
 * Marks a {@code @SpringBootTest} that runs against the real {@link TestBroker}. The
 * application is closed after the class, so that its listeners stop consuming and its
 * queues can be deleted.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Import(RabbitTestBroker.class)
@ContextConfiguration(initializers = RabbitTestBroker.Initializer.class)
@DirtiesContext
public @interface RabbitIntegrationTest {

}
