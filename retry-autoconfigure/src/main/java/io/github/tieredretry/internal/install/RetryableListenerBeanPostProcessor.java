package io.github.tieredretry.internal.install;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpoint;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.NameMatchMethodPointcutAdvisor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Finds {@code @RetryableListener} annotations on beans, and lets every listener
 * container factory bean hand the containers it creates to the
 * {@link RetryableListenerInstaller}.
 * <p>
 * Only the factory sees a container together with the endpoint (bean and method) it was
 * created for, and before the container is initialized; so each factory bean is proxied
 * (a class-based proxy: it keeps its type for injection) and
 * {@code createListenerContainer(endpoint)} is intercepted. This works for Spring Boot's
 * auto-configured factories and for the application's own factory beans alike, without
 * touching their container customizers or advice chains.
 */
public final class RetryableListenerBeanPostProcessor implements BeanPostProcessor {

	private static final Log logger = LogFactory.getLog(RetryableListenerBeanPostProcessor.class);

	private final ObjectProvider<RetryableListenerInstaller> installer;

	private final ObjectProvider<RetryableListenerRegistry> registry;

	private final Set<Class<?>> classesWithoutAnnotation = ConcurrentHashMap.newKeySet();

	/**
	 * Create the post-processor.
	 * @param installer the installer, resolved lazily when the first container is created
	 * @param registry the registry of retryable listeners, resolved lazily
	 */
	public RetryableListenerBeanPostProcessor(ObjectProvider<RetryableListenerInstaller> installer,
			ObjectProvider<RetryableListenerRegistry> registry) {
		this.installer = installer;
		this.registry = registry;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof RabbitListenerContainerFactory<?> factory) {
			return proxy(factory, beanName);
		}
		recordAnnotations(bean, beanName);
		return bean;
	}

	private Object proxy(RabbitListenerContainerFactory<?> factory, String beanName) {
		Class<?> type = factory.getClass();
		if (Modifier.isFinal(type.getModifiers())) {
			logger.warn("Container factory '" + beanName + "' (" + type.getName() + ") is a final class and cannot "
					+ "be proxied: @RetryableListener cannot be applied to listeners it creates");
			return factory;
		}
		ProxyFactory proxyFactory = new ProxyFactory(factory);
		proxyFactory.setProxyTargetClass(true);
		NameMatchMethodPointcutAdvisor advisor = new NameMatchMethodPointcutAdvisor(new InstallingInterceptor(factory));
		advisor.setMappedName("createListenerContainer");
		proxyFactory.addAdvisor(advisor);
		return proxyFactory.getProxy(type.getClassLoader());
	}

	private void recordAnnotations(Object bean, String beanName) {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		if (this.classesWithoutAnnotation.contains(targetClass)
				|| !AnnotationUtils.isCandidateClass(targetClass, RetryableListener.class)) {
			return;
		}
		Map<Method, RetryableListener> methods = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<RetryableListener>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, RetryableListener.class));
		boolean onClass = AnnotatedElementUtils.hasAnnotation(targetClass, RetryableListener.class);
		if (methods.isEmpty() && !onClass) {
			this.classesWithoutAnnotation.add(targetClass);
			return;
		}
		RetryableListenerRegistry listeners = this.registry.getObject();
		if (onClass) {
			listeners.declared(beanName, targetClass, null);
		}
		methods.keySet().forEach((method) -> listeners.declared(beanName, targetClass, method));
	}

	private final class InstallingInterceptor implements MethodInterceptor {

		private final Object factory;

		InstallingInterceptor(Object factory) {
			this.factory = factory;
		}

		@Override
		public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
			Object container = invocation.proceed();
			Object[] arguments = invocation.getArguments();
			if (arguments.length == 1 && arguments[0] instanceof RabbitListenerEndpoint endpoint
					&& container instanceof MessageListenerContainer listenerContainer) {
				RetryableListenerBeanPostProcessor.this.installer.getObject()
					.install(endpoint, listenerContainer, this.factory);
			}
			return container;
		}

	}

}
